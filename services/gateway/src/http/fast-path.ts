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
 * CORS is on) goes to Express. Synchronous while the key, the rate-limit tokens and the book
 * are cached; the request timeout is armed only when a step has to wait for Redis.
 */
import { andThen, type MaybePromise, sendError } from '@pmm/core';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { parse as parseQuery } from 'node:querystring';
import { v1DeprecationHeaders } from '@pmm/protocol';
import type { BookCache } from '../store/book-cache';
import type { ApiKeyCache } from '../store/api-key-cache';
import { authenticate } from './api-key-guard';
import { v1PriceBody, v2PriceBody, sendJson } from './price-routes';
import { enforceRateLimit, type RateLimitOptions } from './rate-limit';
import type { RequestFrame } from './request-frame';
import { ROUTES } from './routes';

export interface FastPathOptions {
  frame: RequestFrame;
  keys: ApiKeyCache;
  rate: RateLimitOptions;
  books: BookCache;
  servedChains: readonly number[];
  /** /v1 exists (chain 8453 served). */
  v1: boolean;
  /** CORS configured: requests with an Origin header go through Express's CORS handling. */
  cors: boolean;
}

const V2_PRICE = ROUTES.price.path;
const V1_PRICE = ROUTES.v1Price.path;
const V1_PRICE_HEADERS = v1DeprecationHeaders(V2_PRICE);

/** Returns a function that answers the request and returns true, or returns false to pass it on. */
export function createFastPath(opts: FastPathOptions): (req: IncomingMessage, res: ServerResponse) => boolean {
  const { frame, keys, rate, books, servedChains } = opts;
  return (req, res) => {
    const method = req.method;
    if (method !== 'GET' && method !== 'HEAD') return false;
    const url = req.url ?? '';
    const q = url.indexOf('?');
    const path = q === -1 ? url : url.slice(0, q);
    const v2 = path === V2_PRICE;
    if (!v2 && !(opts.v1 && path === V1_PRICE)) return false;
    if (opts.cors && req.headers.origin !== undefined) return false;

    const locals = frame.begin(req, res);
    locals.route = path;
    if (!v2) {
      for (const [name, value] of Object.entries(V1_PRICE_HEADERS)) res.setHeader(name, value);
    }
    let result: MaybePromise<Buffer>;
    try {
      result = andThen(authenticate(keys, req.headers), (auth) => {
        locals.auth = auth;
        return andThen(enforceRateLimit(rate, auth.integrator, res), () =>
          // Same query semantics as Express's "simple" parser (node:querystring).
          v2
            ? v2PriceBody(books, servedChains, auth.integrator, q === -1 ? undefined : parseQuery(url.slice(q + 1)))
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
