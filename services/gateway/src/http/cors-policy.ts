/**
 * CORS for browser integrators, configured by CORS_ORIGINS (empty: no CORS headers at all,
 * and a preflight is answered like any other OPTIONS request: 405). Applies to the public
 * API routes only, so that a preflight of an unknown path still gets 404. Exposes the
 * headers a browser client needs to read (request id, rate-limit headers, deprecation).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import cors from 'cors';

/** A CORS step: connect-style, so both Express and the node:http sign route (sign-route.ts) run it. */
export type CorsStep = (req: IncomingMessage, res: ServerResponse, next: (err?: unknown) => void) => void;

export const EXPOSED_HEADERS = [
  'X-Request-Id',
  'RateLimit-Limit',
  'RateLimit-Remaining',
  'RateLimit-Reset',
  'Retry-After',
  'Deprecation',
  'Link',
];

export function corsPolicy(origins: readonly string[], paths: ReadonlySet<string>): CorsStep | undefined {
  if (origins.length === 0) return undefined;
  const handler = cors({
    origin: origins.includes('*') ? '*' : [...origins],
    methods: ['GET', 'HEAD', 'POST'],
    // Last-Event-ID: a browser's EventSource sends it when it reconnects to /v2/price/stream.
    allowedHeaders: ['Content-Type', 'X-API-KEY', 'X-Request-Id', 'Last-Event-ID'],
    exposedHeaders: EXPOSED_HEADERS,
    maxAge: 600,
  });
  return (req, res, next) => {
    const url = req.url ?? '';
    const q = url.indexOf('?');
    if (!paths.has(q === -1 ? url : url.slice(0, q))) return next();
    handler(req, res, next);
  };
}
