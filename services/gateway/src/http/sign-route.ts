/**
 * `POST /v2/swap/sign` and `POST /v1/swap/sign`: the gateway's one sign route, served from
 * node:http in front of Express (as the price routes are, fast-path.ts): measured with
 * `npm run bench gateway`, Express's router and request set-up cost more CPU per quote than
 * everything else the gateway does for it. Express still answers the other methods on these
 * paths (405) and CORS preflights.
 *
 * Steps, in the order of docs/decisions.md#error-precedence: request frame (id, security
 * headers, timeout, metrics, access log) · /v1 deprecation headers · CORS (browser requests,
 * when configured) · API key 401 · rate limit 429 · body 413 · body encoding 400 · the signer,
 * one request built by sign-forward.ts.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { bodyEncoding, v1DeprecationHeaders } from '@pmm/protocol';
import { andThen, readLimitedBody, sendError, type MaybePromise } from '@pmm/core';
import type { ApiKeyCache } from '../store/api-key-cache';
import type { ResolvedApiKey } from '../store/api-key-store';
import { authenticate } from './api-key-guard';
import type { CorsStep } from './cors-policy';
import { enforceRateLimit, type RateLimitOptions } from './rate-limit';
import type { RequestFrame } from './request-frame';
import { ROUTES } from './routes';
import type { signForwarder } from './sign-forward';

export interface SignRouteOptions {
  frame: RequestFrame;
  keys: ApiKeyCache;
  rate: RateLimitOptions;
  bodyLimit: number;
  /** /v1 exists (chain 8453 served). */
  v1: boolean;
  cors?: CorsStep;
  /** Sends the request to the signer (sign-forward.ts), once its steps have passed. */
  forward: ReturnType<typeof signForwarder>;
}

/** Returns a function that answers the request and returns true, or returns false to pass it on. */
export function createSignRoute(opts: SignRouteOptions): (req: IncomingMessage, res: ServerResponse) => boolean {
  const { frame, keys, rate, cors } = opts;
  const v1Headers = Object.entries(v1DeprecationHeaders(ROUTES.sign.path));
  return (req, res) => {
    if (req.method !== 'POST') return false;
    const url = req.url ?? '';
    const q = url.indexOf('?');
    const path = q === -1 ? url : url.slice(0, q);
    const legacy = opts.v1 && path === ROUTES.v1Sign.path;
    if (path !== ROUTES.sign.path && !legacy) return false;

    const locals = frame.begin(req, res);
    locals.route = path;
    frame.armTimeout(req, res, locals);
    if (legacy) for (const [name, value] of v1Headers) res.setHeader(name, value);
    const send = () =>
      readLimitedBody(req, res, opts.bodyLimit, (body) => {
        let encoding: string | undefined;
        try {
          encoding = bodyEncoding(req.headers['content-encoding']);
        } catch (err) {
          return sendError(res, err);
        }
        opts.forward(res, locals, { path, body, encoding });
      });
    const proceed = () => {
      let ready: MaybePromise<ResolvedApiKey>;
      try {
        ready = andThen(authenticate(keys, req.headers), (auth) => {
          locals.auth = auth;
          return andThen(enforceRateLimit(rate, auth.integrator, res), () => auth);
        });
      } catch (err) {
        return sendError(res, err);
      }
      if (ready instanceof Promise) ready.then(send, (err: unknown) => sendError(res, err));
      else send();
    };
    if (cors && req.headers.origin !== undefined) cors(req, res, (err) => (err ? sendError(res, err) : proceed()));
    else proceed();
    return true;
  };
}
