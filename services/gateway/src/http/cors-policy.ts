/**
 * CORS for browser integrators, configured by CORS_ORIGINS (empty: no CORS headers at all,
 * and a preflight is answered like any other OPTIONS request: 405). Applies to the public
 * API routes only, so that a preflight of an unknown path still gets 404. Exposes the
 * headers a browser client needs to read (request id, rate-limit headers, deprecation).
 */
import cors from 'cors';
import type { Step } from '@pmm/core';

export const EXPOSED_HEADERS = [
  'X-Request-Id',
  'RateLimit-Limit',
  'RateLimit-Remaining',
  'RateLimit-Reset',
  'Retry-After',
  'Deprecation',
  'Link',
];

/** The CORS step of the public routes (route table), or undefined when CORS is off. */
export function corsPolicy(origins: readonly string[]): Step | undefined {
  if (origins.length === 0) return undefined;
  return cors({
    origin: origins.includes('*') ? '*' : [...origins],
    methods: ['GET', 'HEAD', 'POST'],
    // Last-Event-ID: a browser's EventSource sends it when it reconnects to /v2/price/stream.
    allowedHeaders: ['Content-Type', 'X-API-KEY', 'X-Request-Id', 'Last-Event-ID'],
    exposedHeaders: EXPOSED_HEADERS,
    maxAge: 600,
  }) as Step;
}
