/**
 * The key step of every route under /v1/ and /v2/ (`X-API-KEY`): a missing, unknown or
 * disabled key (or a disabled integrator) is 401 UNAUTHORIZED. The message does not say which
 * of these it was, so that a client cannot probe which keys exist. When Redis cannot be reached
 * the answer is 503 SERVICE_UNAVAILABLE (the key may be valid; we cannot tell).
 *
 * A failed authentication is counted against the client's address when it is decided
 * (auth-failures.ts); past the limit the answer is 429 instead of 401. A valid key always
 * passes, whatever its address has done; routes without a key (health, /docs) never count.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { API_KEY_HEADER, ApiError } from '@pmm/protocol';
import { attempt, localsOf, type MaybePromise, type Step } from '@pmm/core';
import type { AuthFailures } from './auth-failures';
import { hashApiKey, type ResolvedApiKey } from './api-key-store';
import type { ApiKeyCache } from './api-key-cache';
import { setAuth } from './auth-context';

/** Longer values cannot be a key we issued; rejecting them early bounds the hashing work. */
const MAX_KEY_LENGTH = 256;

const invalid = () => new ApiError('UNAUTHORIZED', 'X-API-KEY: invalid, disabled or revoked API key');
const unreachable = () => new ApiError('SERVICE_UNAVAILABLE', 'API key store unreachable, retry shortly');

function accept(value: ResolvedApiKey | undefined): ResolvedApiKey {
  if (!value || value.key.disabled || value.integrator.disabled) throw invalid();
  return value;
}

/**
 * The key of a request, or a thrown/rejected ApiError (401, or 503 when the store is down).
 * Synchronous on a cache hit.
 */
export function authenticate(cache: ApiKeyCache, headers: IncomingHttpHeaders): MaybePromise<ResolvedApiKey> {
  const raw = headers[API_KEY_HEADER];
  if (typeof raw !== 'string' || raw.length === 0)
    throw new ApiError('UNAUTHORIZED', 'X-API-KEY: missing API key header');
  if (raw.length > MAX_KEY_LENGTH) throw invalid();
  const found = cache.get(hashApiKey(raw));
  if (found instanceof Promise) {
    return found.then(accept, (err: unknown) => {
      throw err instanceof ApiError ? err : unreachable();
    });
  }
  return accept(found);
}

export interface ApiKeyStepOptions {
  keys: ApiKeyCache;
  failures: AuthFailures;
  /** Called on every 429 for failed authentications (metrics). */
  onRefused?: () => void;
}

/** The key step: the request's key on its frame (auth-context.ts), or the error passed on. */
export function apiKeyStep(opts: ApiKeyStepOptions): Step {
  return (req, res, next) =>
    attempt(
      () => authenticate(opts.keys, req.headers),
      (err) => {
        if (!(err instanceof ApiError) || err.code !== 'UNAUTHORIZED') return next(err);
        const wait = opts.failures.fail(req);
        if (wait === 0) return next(err);
        opts.onRefused?.();
        // A guessing client: its refusals are logged at debug, and its body is never read.
        localsOf(res).quiet = true;
        res.setHeader('Connection', 'close');
        next(
          new ApiError('RATE_LIMITED', `too many failed authentications from this address; retry after ${wait} s`, {
            'Retry-After': String(wait),
          }),
        );
      },
      (auth) => {
        setAuth(res, auth);
        next();
      },
    );
}
