/**
 * Error codes of the spec (section 7) plus our documented extensions (docs/decisions/0001-error-precedence.md),
 * each with its HTTP status, and the single error type every service throws.
 */

export const ERROR_STATUS = {
  NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  UNAUTHORIZED: 401,
  RATE_LIMITED: 429,
  QUOTA_EXCEEDED: 429,
  PAYLOAD_TOO_LARGE: 413,
  MALFORMED_REQUEST: 400,
  REQUEST_TIMEOUT: 408,
  EXPECTATION_FAILED: 417,
  HEADERS_TOO_LARGE: 431,
  INVALID_JSON: 400,
  UNSUPPORTED_FIELD: 400,
  VALIDATION_ERROR: 422,
  UNSUPPORTED_CHAIN: 400,
  SERVICE_UNAVAILABLE: 503,
  HALTED: 503,
  PAIR_NOT_FOUND: 400,
  ADDRESS_NOT_WHITELISTED: 403,
  SIGNING_FAILED: 500,
  ENCODING_FAILED: 500,
  INTERNAL_ERROR: 500,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

export const ERROR_CODES = Object.keys(ERROR_STATUS) as ErrorCode[];

/** The JSON body of every error response (spec section 2.5). */
export interface ErrorEnvelope {
  error: { code: ErrorCode; message: string; requestId: string };
}

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

const GENERIC_5XX: Partial<Record<ErrorCode, string>> = {
  SIGNING_FAILED: 'signing failed',
  ENCODING_FAILED: 'encoding failed',
  INTERNAL_ERROR: 'internal error',
};

/**
 * Builds the envelope for any thrown value. Anything that is not an ApiError becomes
 * INTERNAL_ERROR with a generic message: a 5xx body never echoes an exception text.
 */
export function toErrorEnvelope(
  err: unknown,
  requestId: string,
): { status: number; body: ErrorEnvelope; headers: Record<string, string> } {
  const apiError = err instanceof ApiError ? err : new ApiError('INTERNAL_ERROR', 'internal error');
  const message = apiError.status >= 500 && GENERIC_5XX[apiError.code] ? GENERIC_5XX[apiError.code]! : apiError.message;
  return {
    status: apiError.status,
    headers: apiError.headers,
    body: { error: { code: apiError.code, message, requestId } },
  };
}
