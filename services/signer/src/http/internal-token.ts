/**
 * The signer is internal: only the gateway may call its sign routes. The gateway proves it
 * with the shared secret INTERNAL_TOKEN in `X-Internal-Token`.
 *
 * The comparison is constant-time over SHA-256 digests of both values, so neither the
 * content nor the length of the token leaks through response timing.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { ApiError, INTERNAL_TOKEN_HEADER } from '@pmm/protocol';
import type { IncomingHttpHeaders } from 'node:http';

const sha256 = (text: string): Buffer => createHash('sha256').update(text, 'utf8').digest();

/**
 * A check of `X-Internal-Token` against `token`: throws 401 UNAUTHORIZED unless equal. Used
 * by the Express route and the fast path (sign-fast-path.ts).
 */
export function internalTokenCheck(token: string): (headers: IncomingHttpHeaders) => void {
  const expected = sha256(token);
  return (headers) => {
    const got = headers[INTERNAL_TOKEN_HEADER];
    if (typeof got !== 'string' || got.length === 0) {
      throw new ApiError('UNAUTHORIZED', 'missing internal token (this service only accepts calls from the gateway)');
    }
    if (!timingSafeEqual(sha256(got), expected)) {
      throw new ApiError('UNAUTHORIZED', 'invalid internal token (this service only accepts calls from the gateway)');
    }
  };
}
