import type { ApiErrorCode } from './api-types';

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
