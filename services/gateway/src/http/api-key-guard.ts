/**
 * `X-API-KEY` check for every route under /v1/ and /v2/: a missing, unknown or disabled key
 * (or a disabled integrator) is 401 UNAUTHORIZED. The message does not say which of these it
 * was, so that a client cannot probe which keys exist. When Redis cannot be reached the
 * answer is 503 SERVICE_UNAVAILABLE (the key may be valid; we cannot tell).
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { API_KEY_HEADER, ApiError } from '@pmm/protocol';
import { attempt, type MaybePromise } from '@pmm/core';
import { hashApiKey, type ResolvedApiKey } from '../store/api-key-store';
import type { ApiKeyCache } from '../store/api-key-cache';
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

/** The Express form: sets the auth context, or passes the error on. */
export function apiKeyGuard(cache: ApiKeyCache): RequestHandler {
  return (req: Request, res: Response, next: NextFunction) =>
    attempt(
      () => authenticate(cache, req.headers),
      (err) => next(err),
      (auth) => {
        setAuth(res, auth);
        next();
      },
    );
}
