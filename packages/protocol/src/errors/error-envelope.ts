/**
 * The error envelope: the body of every error response, built from any thrown value.
 */
import { ApiError } from './api-error';
import type { ErrorCode } from './error-codes';

/** The JSON body of every error response (spec section 2.5). */
export interface ErrorEnvelope {
  error: { code: ErrorCode; message: string; requestId: string };
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
