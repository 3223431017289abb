/**
 * The rate-limit step: per integrator, over its window (rate-limiter.ts has the algorithm).
 * Runs after the key step. Every authenticated response carries `RateLimit-Limit`,
 * `RateLimit-Remaining` and `RateLimit-Reset` (seconds until the window ends, as in the IETF
 * RateLimit header draft); a refused request is 429 RATE_LIMITED with `Retry-After`.
 * Redis unreachable → 503 (fail closed: without Redis the limit cannot be shared).
 */
import type { ServerResponse } from 'node:http';
import { ApiError, type IntegratorRecord } from '@pmm/protocol';
import { attempt, type MaybePromise, type Step } from '@pmm/core';
import type { RateDecision, RateLimiter } from './rate-limiter';
import { authOf } from './auth-context';

export interface RateLimitOptions {
  limiter: RateLimiter;
  /** Used when the integrator's record sets 0. */
  defaults: { requests: number; windowSeconds: number };
  onLimited?: () => void;
}

/**
 * Spends one request of the integrator's budget and sets the RateLimit headers on `res`;
 * throws/rejects 429 (over the limit) or 503 (Redis unreachable). Synchronous while the
 * replica holds reserved tokens.
 */
export function enforceRateLimit(
  opts: RateLimitOptions,
  integrator: IntegratorRecord,
  res: ServerResponse,
): MaybePromise<void> {
  const requests = integrator.rateLimit.requests > 0 ? integrator.rateLimit.requests : opts.defaults.requests;
  const windowSeconds =
    integrator.rateLimit.windowSeconds > 0 ? integrator.rateLimit.windowSeconds : opts.defaults.windowSeconds;
  const apply = (d: RateDecision): void => {
    res.setHeader('RateLimit-Limit', d.limit);
    res.setHeader('RateLimit-Remaining', d.remaining);
    res.setHeader('RateLimit-Reset', d.resetSeconds);
    if (d.allowed) return;
    opts.onLimited?.();
    throw new ApiError(
      'RATE_LIMITED',
      `rate limit of ${d.limit} requests per window exceeded; retry in ${d.resetSeconds} s`,
      {
        'Retry-After': String(d.resetSeconds),
      },
    );
  };
  const decision = opts.limiter.consume(integrator.id, requests, windowSeconds);
  if (decision instanceof Promise) {
    return decision.then(apply, () => {
      throw new ApiError('SERVICE_UNAVAILABLE', 'rate limiter unreachable, retry shortly');
    });
  }
  return apply(decision);
}

/** The step form. */
export function rateLimitStep(opts: RateLimitOptions): Step {
  return (_req, res, next) =>
    attempt(
      () => enforceRateLimit(opts, authOf(res).integrator, res),
      (err) => next(err),
      () => next(),
    );
}
