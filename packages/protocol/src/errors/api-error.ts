/**
 * The single error type every service throws, with its HTTP status from the error code
 * (error-codes.ts), and the `VALIDATION_ERROR` of one field.
 */
import { ERROR_STATUS, type ErrorCode } from './error-codes';

/**
 * An error meant for the client. `message` is shown to the client as is, so it must never
 * carry a secret or an internal exception text; for 5xx codes the renderer replaces it with
 * a generic text anyway. An ApiError that stands for another failure keeps it as `cause`
 * (never shown to the client; logged with the request's line, so the log leads to the origin).
 */
export class ApiError extends Error {
  readonly status: number;
  /** Extra headers for the response (e.g. `Retry-After`). */
  readonly headers: Record<string, string>;
  constructor(
    readonly code: ErrorCode,
    message: string,
    headers: Record<string, string> = {},
    options: { cause?: unknown } = {},
  ) {
    super(message, options);
    this.name = 'ApiError';
    this.status = ERROR_STATUS[code];
    this.headers = this.status === 503 ? withRetryAfter(headers) : headers;
  }
}

/**
 * Seconds a client is told to wait after a 503 that names no better figure: every 503 is
 * transient (no live book yet, a store or the signer unreachable) and a new block comes within
 * a few seconds. Set here, on the error type, so that no 503 can go out without `Retry-After`.
 */
export const SERVICE_UNAVAILABLE_RETRY_AFTER_SECONDS = 1;

function withRetryAfter(headers: Record<string, string>): Record<string, string> {
  if (Object.keys(headers).some((name) => name.toLowerCase() === 'retry-after')) return headers;
  return { ...headers, 'Retry-After': String(SERVICE_UNAVAILABLE_RETRY_AFTER_SECONDS) };
}

/** A `VALIDATION_ERROR` in the spec's `<field>: <reason>` form. */
export function validationError(field: string, reason: string): ApiError {
  return new ApiError('VALIDATION_ERROR', `${field}: ${reason}`);
}
