import { ERROR_CODES, type ErrorCode as ApiErrorCode } from '@pmm/protocol';
import { rateLimitFromHeaders, type RateLimitInfo } from './rate-limit-info';
import { retryAfterMs } from './retry-after';

/**
 * Codes of failures the SDK sees itself, with status 0: no answer was read, or (QUOTE_EXPIRED) the
 * answer was a quote whose deadline had already passed (quote-deadline.ts).
 */
export type ClientErrorCode = 'NETWORK_ERROR' | 'BAD_RESPONSE' | 'TIMEOUT' | 'ABORTED' | 'QUOTE_EXPIRED';

/**
 * An error answered by the API, typed by the spec's code, or a client-side failure (status 0).
 * `HALTED` (503): the operator halted signing in a scope that covers the request (everything,
 * the chain, the pair, your integrator or the user address); not retried by the SDK, as it lasts
 * until the operator lifts it. The message names the kind of scope, never why.
 * `PAIR_UNAVAILABLE` (503): the maker does not offer the pair for the moment (it is also out of
 * the book); retried like other 503 answers, after `Retry-After`.
 */
export class PmmApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: ApiErrorCode | ClientErrorCode,
    message: string,
    readonly requestId?: string,
    /** The wait the server asked for (`Retry-After`, on 429 and 503), in ms. */
    readonly retryAfterMs?: number,
    /** The answer's `RateLimit-*` figures, when it carried them. */
    readonly rateLimit?: RateLimitInfo,
  ) {
    super(`${code}: ${message}`);
    this.name = 'PmmApiError';
  }
}

function isCode(value: unknown): value is ApiErrorCode {
  return typeof value === 'string' && (ERROR_CODES as readonly string[]).includes(value);
}

/** The PmmApiError of a non-2xx answer whose body parsed as `json` (the error envelope, normally). */
export function apiErrorFromResponse(
  res: { status: number; headers: { get(name: string): string | null } },
  json: unknown,
): PmmApiError {
  const e = (json as { error?: { code?: unknown; message?: unknown; requestId?: unknown } } | null)?.error;
  return new PmmApiError(
    res.status,
    isCode(e?.code) ? e.code : 'BAD_RESPONSE',
    typeof e?.message === 'string' ? e.message : `HTTP ${res.status}`,
    typeof e?.requestId === 'string' ? e.requestId : (res.headers.get('x-request-id') ?? undefined),
    retryAfterMs(res.headers.get('retry-after')),
    rateLimitFromHeaders(res.headers),
  );
}

/** The PmmApiError of a non-2xx answer from its body text, which may not be JSON (a proxy's page: BAD_RESPONSE). */
export function apiErrorFromText(
  res: { status: number; headers: { get(name: string): string | null } },
  text: string,
): PmmApiError {
  let json: unknown = null;
  try {
    json = JSON.parse(text);
  } catch {
    // Not the envelope: apiErrorFromResponse keeps the status and Retry-After.
  }
  return apiErrorFromResponse(res, json);
}
