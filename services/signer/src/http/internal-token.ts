/**
 * The signer is internal: only the gateway may call its sign routes. The gateway proves it
 * with the shared secret INTERNAL_TOKEN in `X-Internal-Token`.
 *
 * The comparison is constant-time over SHA-256 digests of both values, so neither the
 * content nor the length of the token leaks through response timing.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { RequestHandler } from 'express';
import { ApiError, INTERNAL_TOKEN_HEADER } from '@pmm/protocol';

const sha256 = (text: string): Buffer => createHash('sha256').update(text, 'utf8').digest();

/** 401 UNAUTHORIZED unless `X-Internal-Token` equals `token`. */
export function requireInternalToken(token: string): RequestHandler {
  const expected = sha256(token);
  return (req, _res, next) => {
    const got = req.headers[INTERNAL_TOKEN_HEADER];
    if (typeof got !== 'string' || got.length === 0) {
      return next(
        new ApiError('UNAUTHORIZED', 'missing internal token (this service only accepts calls from the gateway)'),
      );
    }
    if (!timingSafeEqual(sha256(got), expected)) {
      return next(
        new ApiError('UNAUTHORIZED', 'invalid internal token (this service only accepts calls from the gateway)'),
      );
    }
    next();
  };
}
