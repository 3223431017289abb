/**
 * The hot path: `GET`/`HEAD` `/v2/price` and `/v1/price` answered straight from node:http,
 * in front of Express. Express costs about as much per request as everything else the
 * gateway does (measured: bench/gateway.bench.ts), and these two routes are the ones polled
 * every block by every integrator.
 *
 * It runs the SAME steps as the Express routes (request frame, authenticate,
 * enforceRateLimit, v2PriceBody / v1PriceBody, sendError), in the same order; only the
 * routing differs, and for these two exact paths and methods there is nothing to route: 404
 * and 405 cannot happen. Anything else (other paths or methods, and browser requests when
 * CORS is on: an `Origin` header while CORS is configured) goes to Express. Synchronous while the key, the rate-limit tokens and the book
 * are cached; the request timeout is armed only when a step has to wait for Redis.
 */
import { andThen, type MaybePromise, sendError } from '@pmm/core';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { v1DeprecationHeaders } from '@pmm/protocol';
import { parse as parseQuery } from 'node:querystring';
import type { BookCache } from '../store/book-cache';
import type { ApiKeyCache } from '../store/api-key-cache';
import { authenticate } from './api-key-guard';
import { v1PriceBody, v2PriceBody, sendJson } from './price-routes';
import { enforceRateLimit, type RateLimitOptions } from './rate-limit';
import { ROUTES } from './routes';
import type { RequestFrame, RequestLocals } from './request-frame';

export interface FastRouteOptions {
  frame: RequestFrame;
  /** /v1 exists (chain 8453 served). */
  v1: boolean;
  /** CORS configured: requests with an Origin header go through Express's CORS handling. */
  cors: boolean;
}

/** A request a fast path took: its frame is begun. */
export interface FastRequest {
  locals: RequestLocals;
  /** The matched path (also the route pattern in metrics and logs). */
  path: string;
  /** The /v2 form (false: the /v1 form). */
  v2: boolean;
  /** The text after `?`, or undefined when the URL has none. */
  query: string | undefined;
}

/** Returns the matcher of one route pair: the begun request, or undefined to pass it on. */
function fastRoute(
  v2Path: string,
  v1Path: string,
  opts: FastRouteOptions,
): (req: IncomingMessage, res: ServerResponse) => FastRequest | undefined {
  const v1Headers = Object.entries(v1DeprecationHeaders(v2Path));
  return (req, res) => {
    const url = req.url ?? '';
    const q = url.indexOf('?');
    const path = q === -1 ? url : url.slice(0, q);
    const v2 = path === v2Path;
    if (!v2 && !(opts.v1 && path === v1Path)) return undefined;
    if (opts.cors && req.headers.origin !== undefined) return undefined;

    const locals = opts.frame.begin(req, res);
    locals.route = path;
    if (!v2) for (const [name, value] of v1Headers) res.setHeader(name, value);
    return { locals, path, v2, query: q === -1 ? undefined : url.slice(q + 1) };
  };
}

export interface FastPathOptions extends FastRouteOptions {
  keys: ApiKeyCache;
  rate: RateLimitOptions;
  books: BookCache;
  servedChains: readonly number[];
}

/** Returns a function that answers the request and returns true, or returns false to pass it on. */
export function createFastPath(opts: FastPathOptions): (req: IncomingMessage, res: ServerResponse) => boolean {
  const { frame, keys, rate, books, servedChains } = opts;
  const take = fastRoute(ROUTES.price.path, ROUTES.v1Price.path, opts);
  return (req, res) => {
    const method = req.method;
    if (method !== 'GET' && method !== 'HEAD') return false;
    const taken = take(req, res);
    if (!taken) return false;
    const { locals, v2, query } = taken;
    let result: MaybePromise<Buffer>;
    try {
      result = andThen(authenticate(keys, req.headers), (auth) => {
        locals.auth = auth;
        return andThen(enforceRateLimit(rate, auth.integrator, res), () =>
          // Same query semantics as Express's "simple" parser (node:querystring).
          v2
            ? v2PriceBody(books, servedChains, auth.integrator, query === undefined ? undefined : parseQuery(query))
            : v1PriceBody(books, auth.integrator),
        );
      });
    } catch (err) {
      sendError(res, err);
      return true;
    }
    if (result instanceof Promise) {
      frame.armTimeout(req, res, locals);
      result.then(
        (body) => sendJson(res, body),
        (err: unknown) => sendError(res, err),
      );
    } else {
      sendJson(res, result);
    }
    return true;
  };
}
