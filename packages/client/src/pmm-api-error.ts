import { API_ERROR_CODES, type ApiErrorCode } from './api-types';

/** An error answered by the API, typed by the spec's code. */
export class PmmApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: ApiErrorCode | 'NETWORK_ERROR' | 'BAD_RESPONSE',
    message: string,
    readonly requestId?: string,
    /** Seconds to wait, from `Retry-After` on 429 and 503. */
    readonly retryAfter?: number,
  ) {
    super(`${code}: ${message}`);
    this.name = 'PmmApiError';
  }
}

function isCode(value: unknown): value is ApiErrorCode {
  return typeof value === 'string' && (API_ERROR_CODES as readonly string[]).includes(value);
}

/** The PmmApiError of a non-2xx answer whose body parsed as `json` (the error envelope, normally). */
export function apiErrorFromResponse(
  res: { status: number; headers: { get(name: string): string | null } },
  json: unknown,
): PmmApiError {
  const e = (json as { error?: { code?: unknown; message?: unknown; requestId?: unknown } } | null)?.error;
  const retryAfter = res.headers.get('retry-after');
  return new PmmApiError(
    res.status,
    isCode(e?.code) ? e.code : 'BAD_RESPONSE',
    typeof e?.message === 'string' ? e.message : `HTTP ${res.status}`,
    typeof e?.requestId === 'string' ? e.requestId : (res.headers.get('x-request-id') ?? undefined),
    retryAfter ? Number(retryAfter) : undefined,
  );
}
