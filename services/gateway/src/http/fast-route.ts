/**
 * The first steps of both fast paths (fast-path.ts for the price routes, sign-fast-path.ts
 * for the sign routes): decide whether the request is theirs, then begin it the way the
 * Express routes do (request frame; the /v1 deprecation headers).
 *
 * A request is taken when its path (the query string aside) is the route's /v2 path or,
 * when /v1 exists, its /v1 path, and it is not a browser request that must go through
 * Express's CORS handling (an `Origin` header while CORS is configured). The method is the
 * caller's to check first.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { v1DeprecationHeaders } from '@pmm/protocol';
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
export function fastRoute(
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
