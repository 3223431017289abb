/**
 * The signer is internal: only the gateway may call it. The gateway proves it with the shared
 * secret INTERNAL_TOKEN in `X-Internal-Token`.
 *
 * The comparison is constant-time over SHA-256 digests of both values, so neither the
 * content nor the length of the token leaks through response timing. A refusal is 401 with a
 * `WWW-Authenticate: X-Internal-Token` challenge, by which the gateway tells it from a 401
 * about the integrator (protocol INTERNAL_TOKEN_SCHEME).
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import type { Step } from '@pmm/core';
import { ApiError, INTERNAL_TOKEN_HEADER, INTERNAL_TOKEN_SCHEME } from '@pmm/protocol';

const sha256 = (text: string): Buffer => createHash('sha256').update(text, 'utf8').digest();

const refused = (what: string) =>
  new ApiError('UNAUTHORIZED', `${what} internal token (this service only accepts calls from the gateway)`, {
    'WWW-Authenticate': INTERNAL_TOKEN_SCHEME,
  });

/** A check of `X-Internal-Token` against `token`: throws 401 UNAUTHORIZED unless equal. */
export function internalTokenCheck(token: string): (headers: IncomingHttpHeaders) => void {
  const expected = sha256(token);
  return (headers) => {
    const got = headers[INTERNAL_TOKEN_HEADER];
    if (typeof got !== 'string' || got.length === 0) throw refused('missing');
    if (!timingSafeEqual(sha256(got), expected)) throw refused('invalid');
  };
}

/** The token step: every route but the health ones takes it first (a refused request's body is not read). */
export function internalTokenStep(token: string): Step {
  const check = internalTokenCheck(token);
  return (req, _res, next) => {
    try {
      check(req.headers);
    } catch (err) {
      req.resume();
      return next(err);
    }
    next();
  };
}
