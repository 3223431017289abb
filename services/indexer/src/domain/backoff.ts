/**
 * Capped exponential backoff for reconnecting to a node. Pure: the caller sleeps.
 *
 * delay(attempt) = min(max, min × 2^attempt), then "equal jitter": half of it fixed and half
 * random, so that several replicas that lost the same node do not reconnect in lockstep, while
 * the delay never drops below half the nominal value (a node that refuses connections is not
 * hammered).
 */

export interface BackoffBounds {
  /** First delay, ms (> 0). */
  minMs: number;
  /** Largest delay, ms (≥ minMs). */
  maxMs: number;
}

/**
 * The delay before reconnect attempt `attempt` (0 for the first retry), in ms.
 * `random` is injectable for tests; it must return a value in [0, 1).
 *
 * INVARIANT: minMs / 2 ≤ result ≤ maxMs, and the nominal delay never decreases with `attempt`.
 */
export function backoffDelay(attempt: number, bounds: BackoffBounds, random: () => number = Math.random): number {
  if (!Number.isSafeInteger(attempt) || attempt < 0) throw new RangeError('attempt must be a non-negative integer');
  if (!(bounds.minMs > 0) || !(bounds.maxMs >= bounds.minMs))
    throw new RangeError('backoff bounds: need 0 < minMs ≤ maxMs');
  // 2^attempt overflows to Infinity past ~1024, which min() caps; cap the exponent anyway.
  const nominal = Math.min(bounds.maxMs, bounds.minMs * 2 ** Math.min(attempt, 52));
  const half = nominal / 2;
  return Math.round(half + half * random());
}
