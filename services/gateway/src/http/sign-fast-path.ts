/**
 * The sign routes' hot path: `POST /v2/swap/sign` and `POST /v1/swap/sign` handled straight
 * from node:http, in front of Express (as fast-path.ts does for the price routes), and sent to
 * the signer over the sign link (core sign-link/) rather than one HTTP request each. Measured
 * with `npm run bench gateway`, Express, http-proxy-middleware and an HTTP hop per quote cost
 * several times what checking and signing it does; this is the request that carries money.
 *
 * Same steps, same order as the Express route in app.ts: request frame (id, security headers,
 * timeout, metrics, access log) · /v1 deprecation headers · API key 401 · rate limit 429 ·
 * body 413 · the signer. Requests it does not take go to Express and http-proxy-middleware
 * (sign-proxy.ts, the reference this path is tested against): other methods or paths (404 and
 * 405 are Express's), browser requests when CORS is on (Express answers preflights and adds
 * the CORS headers), and compressed bodies (the signer's body-parser inflates those; the link
 * carries the bytes only).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ApiError } from '@pmm/protocol';
import {
  andThen,
  sendError,
  type LinkAnswer,
  type MaybePromise,
  type SignLinkClient,
  type SignLinkError,
} from '@pmm/core';
import type { ApiKeyCache } from '../store/api-key-cache';
import type { ResolvedApiKey } from '../store/api-key-store';
import { authenticate } from './api-key-guard';
import { readLimitedBody } from './body-limit';
import { fastRoute, type FastRouteOptions } from './fast-route';
import { enforceRateLimit, type RateLimitOptions } from './rate-limit';
import type { RequestLocals } from './request-frame';
import { ROUTES } from './routes';
import { signerIdentityHeaders } from './signer-headers';

export interface SignFastPathOptions extends FastRouteOptions {
  keys: ApiKeyCache;
  rate: RateLimitOptions;
  link: SignLinkClient;
  bodyLimit: number;
  /** Called with a short reason on every upstream failure (metrics). */
  onUpstreamError?: (reason: string) => void;
}

/** The signer's answer, as it wrote it (status, headers, body), to the client. */
function writeAnswer(res: ServerResponse, answer: LinkAnswer): void {
  if (res.headersSent || res.destroyed) return;
  for (const name in answer.headers) res.setHeader(name, answer.headers[name]!);
  res.statusCode = answer.status;
  // As latin1 text (the same bytes): Node then sends headers and body in one write().
  res.end(answer.body.toString('latin1'), 'latin1');
}

/** Returns a function that answers the request and returns true, or returns false to pass it on. */
export function createSignFastPath(opts: SignFastPathOptions): (req: IncomingMessage, res: ServerResponse) => boolean {
  const { frame, keys, rate, link } = opts;
  const take = fastRoute(ROUTES.sign.path, ROUTES.v1Sign.path, opts);

  const forward = (res: ServerResponse, locals: RequestLocals, path: string, body: Buffer, auth: ResolvedApiKey) => {
    const exchange = link.request(
      {
        path,
        headers: signerIdentityHeaders({
          requestId: locals.requestId,
          integratorId: auth.integrator.id,
          apiKeyId: auth.key.keyId,
        }),
      },
      body,
    );
    // The request timeout (request-frame.ts) answers 503 and cancels the exchange.
    locals.upstream = { destroy: exchange.cancel };
    exchange.answer.then(
      (answer) => {
        locals.upstream = undefined;
        writeAnswer(res, answer);
      },
      (err: SignLinkError) => {
        locals.upstream = undefined;
        opts.onUpstreamError?.(err.code);
        if (res.headersSent || res.destroyed) return;
        locals.log.warn('signer unreachable', { code: err.code, reason: err.message });
        sendError(res, new ApiError('SERVICE_UNAVAILABLE', 'signer unavailable, retry shortly'));
      },
    );
  };

  return (req, res) => {
    if (req.method !== 'POST') return false;
    const encoding = req.headers['content-encoding'];
    if (encoding !== undefined && encoding.toLowerCase() !== 'identity') return false;
    const taken = take(req, res);
    if (!taken) return false;
    const { locals, path } = taken;
    frame.armTimeout(req, res, locals);
    const proceed = (auth: ResolvedApiKey) =>
      readLimitedBody(req, res, opts.bodyLimit, (body) => forward(res, locals, path, body, auth));
    let ready: MaybePromise<ResolvedApiKey>;
    try {
      ready = andThen(authenticate(keys, req.headers), (auth) => {
        locals.auth = auth;
        return andThen(enforceRateLimit(rate, auth.integrator, res), () => auth);
      });
    } catch (err) {
      sendError(res, err);
      return true;
    }
    if (ready instanceof Promise) ready.then(proceed, (err: unknown) => sendError(res, err));
    else proceed(ready);
    return true;
  };
}
