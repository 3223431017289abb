/**
 * The sign routes' hot path: `POST /v2/swap/sign` and `POST /v1/swap/sign` handled straight
 * from node:http, in front of Express (as fast-path.ts does for the price routes, and for the
 * same reason: measured, Express and http-proxy-middleware cost several times what the rest
 * of a sign request does; see sign-forwarder.ts).
 *
 * Same steps, same order as the Express route in app.ts: request frame (id, security headers,
 * timeout, metrics, access log) · /v1 deprecation headers · API key 401 · rate limit 429 ·
 * body 413 · forward. Requests it does not take go to Express: other methods or paths (404
 * and 405 are Express's), and browser requests when CORS is on (Express answers preflights
 * and adds the CORS headers), which then go through http-proxy-middleware.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ApiError } from '@pmm/protocol';
import { andThen, type MaybePromise, sendError } from '@pmm/core';
import type { ApiKeyCache } from '../store/api-key-cache';
import type { ResolvedApiKey } from '../store/api-key-store';
import { authenticate } from './api-key-guard';
import { readLimitedBody } from './body-limit';
import { fastRoute, type FastRouteOptions } from './fast-route';
import { enforceRateLimit, type RateLimitOptions } from './rate-limit';
import { ROUTES } from './routes';
import type { SignForwarder } from './sign-forwarder';

export interface SignFastPathOptions extends FastRouteOptions {
  keys: ApiKeyCache;
  rate: RateLimitOptions;
  forward: SignForwarder;
  internalToken: string;
  bodyLimit: number;
  /** Called with a short reason on every upstream failure (metrics). */
  onUpstreamError?: (reason: string) => void;
}

/** Returns a function that answers the request and returns true, or returns false to pass it on. */
export function createSignFastPath(opts: SignFastPathOptions): (req: IncomingMessage, res: ServerResponse) => boolean {
  const { frame, keys, rate } = opts;
  const take = fastRoute(ROUTES.sign.path, ROUTES.v1Sign.path, opts);
  return (req, res) => {
    if (req.method !== 'POST') return false;
    const taken = take(req, res);
    if (!taken) return false;
    const { locals, path } = taken;
    frame.armTimeout(req, res, locals);
    const proceed = (auth: ResolvedApiKey) =>
      readLimitedBody(req, res, opts.bodyLimit, (body) =>
        opts.forward(
          req,
          res,
          path,
          body,
          {
            internalToken: opts.internalToken,
            requestId: locals.requestId,
            integratorId: auth.integrator.id,
            apiKeyId: auth.key.keyId,
          },
          {
            onUpstream: (upstream) => {
              locals.upstream = upstream;
            },
            onError: (err) => {
              opts.onUpstreamError?.(err.code ?? 'unknown');
              if (res.headersSent || res.destroyed) return;
              locals.log.warn('signer unreachable', { code: err.code ?? 'unknown' });
              sendError(res, new ApiError('SERVICE_UNAVAILABLE', 'signer unavailable, retry shortly'));
            },
          },
        ),
      );
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
