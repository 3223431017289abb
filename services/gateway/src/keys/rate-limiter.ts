/**
 * Per-integrator rate limit shared by every gateway replica through Redis.
 *
 * Algorithm: FIXED WINDOW. Windows are aligned to the epoch (`floor(now / window)`), one
 * counter per (integrator, window) at `<prefix>:rl:<integrator>:<windowStart>`, expiring
 * after its window. A fixed window lets a client send up to 2 × limit across a window
 * boundary; in exchange `Retry-After` and `RateLimit-Reset` are exact and one small key per
 * window is all the state. (Replicas align windows on their own clocks; NTP skew of a few
 * milliseconds only moves a boundary by that much.)
 *
 * Redis cost: a replica reserves tokens from the shared counter in batches with one atomic
 * Lua call and spends them locally, refilling in the background before it runs out.
 * INVARIANT: the counter in Redis only grows by what the Lua script grants, and the script
 * never grants past the limit, so all replicas together admit at most `limit` requests per
 * window, whatever the batch. The price of batching is the other direction: tokens a replica
 * reserved but did not spend by the end of the window are lost, so the fleet may admit up to
 * `replicas × (batch − 1)` fewer requests than the limit. The batch is 1 (a Redis round trip
 * per request, exact) for limits up to {@link EXACT_UP_TO} per window and limit/1000 above
 * (so at most 0.1 % per replica is lost); see {@link batchFor}.
 * A limit of batch 1 and at least {@link AHEAD_FROM} per window keeps ONE token reserved ahead:
 * the Redis call that reserves a request's token is made after the one before it, not on its
 * path (on a Redis that fsyncs every write, that call was a second fsync on every sign's path).
 * Its price, as a batch's: up to one request per replica per window fewer than the limit (at
 * most 1 % per replica), never one more.
 * Once Redis reports the window exhausted, the replica answers 429 locally until the window
 * ends (a counter never goes down within its window).
 */
import { commandsDir, luaCommand, redisKeys, type RedisClient } from '@pmm/core';

/** Limits up to this many requests per window are enforced with one Redis call per request. */
export const EXACT_UP_TO = 1_000;

/** Exact limits (batch 1) from this many per window keep one token reserved ahead (see the module comment). */
export const AHEAD_FROM = 100;

/** Tokens reserved per Redis call for a limit (see the module comment). */
export function batchFor(limit: number, exactUpTo = EXACT_UP_TO): number {
  return limit <= exactUpTo ? 1 : Math.min(Math.floor(limit / EXACT_UP_TO), 1_000);
}

export interface RateLimiterOptions {
  now?: () => number;
  /** Limits up to this are exact (batch 1); default {@link EXACT_UP_TO}. Infinity: always exact. */
  exactUpTo?: number;
}

/** pmmReserveTokens: the shared counter's reservation (commands/pmmReserveTokens.lua). */
const COMMANDS = commandsDir(__dirname, 2);

export interface RateDecision {
  allowed: boolean;
  limit: number;
  /** Requests left in this window, as far as this replica knows. */
  remaining: number;
  /** Whole seconds until the window ends (≥ 1). */
  resetSeconds: number;
}

interface WindowState {
  windowStart: number;
  windowEnd: number;
  /** Tokens reserved from Redis and not yet spent. */
  local: number;
  /** The shared counter after this replica's last reservation. */
  used: number;
  /** Redis granted nothing: the window is spent for every replica. */
  exhausted: boolean;
  /** A background refill is running. */
  refilling: boolean;
}

type ReserveFn = (key: string, limit: number, want: number, ttlMs: number) => Promise<[number, number]>;

export class RateLimiter {
  private readonly keys: ReturnType<typeof redisKeys>;
  private readonly states = new Map<string, WindowState>();
  private readonly reserveInRedis: ReserveFn;

  private readonly now: () => number;
  private readonly exactUpTo: number;

  constructor(redis: RedisClient, prefix: string, opts: RateLimiterOptions = {}) {
    this.keys = redisKeys(prefix);
    this.now = opts.now ?? Date.now;
    this.exactUpTo = opts.exactUpTo ?? EXACT_UP_TO;
    const reserve = luaCommand<[number, number]>(redis, COMMANDS, 'pmmReserveTokens', 1);
    this.reserveInRedis = (key, limit, want, ttlMs) => reserve(key, limit, want, ttlMs);
  }

  /**
   * Spends one request of `integratorId`'s budget. Synchronous when a local token is left
   * (or the window is known to be spent); rejects when Redis cannot be reached (the caller
   * answers 503).
   */
  consume(integratorId: string, limit: number, windowSeconds: number): RateDecision | Promise<RateDecision> {
    const now = this.now();
    const windowMs = windowSeconds * 1_000;
    const windowStart = Math.floor(now / windowMs) * windowMs;
    const id = `${integratorId}|${windowSeconds}`;
    let s = this.states.get(id);
    if (!s || s.windowStart !== windowStart) {
      if (this.states.size >= 10_000) this.prune(now);
      s = { windowStart, windowEnd: windowStart + windowMs, local: 0, used: 0, exhausted: false, refilling: false };
      this.states.set(id, s);
    }
    const state = s;
    const resetSeconds = Math.max(1, Math.ceil((state.windowEnd - now) / 1_000));
    const batch = batchFor(limit, this.exactUpTo);
    const reserve = (want: number) =>
      this.reserveInRedis(
        this.keys.rateLimit(integratorId, windowStart / 1_000),
        limit,
        want,
        state.windowEnd - now + 1_000,
      ).then(([granted, used]) => {
        state.used = Math.max(state.used, used);
        if (granted < want) state.exhausted = true;
        return granted;
      });
    const allowed = (): RateDecision => ({
      allowed: true,
      limit,
      remaining: state.exhausted ? state.local : Math.max(0, limit - state.used) + state.local,
      resetSeconds,
    });
    const denied: RateDecision = { allowed: false, limit, remaining: 0, resetSeconds };

    // Refill ahead of need (one refill at a time) so that a busy integrator never waits: below
    // half a batch, or for an exact limit from AHEAD_FROM, once no token is left.
    const ahead = batch > 1 || limit >= AHEAD_FROM;
    const refillAhead = () => {
      if (!ahead || state.local >= Math.max(1, batch / 2) || state.exhausted || state.refilling) return;
      state.refilling = true;
      reserve(batch)
        .then((granted) => {
          state.local += granted;
        })
        .catch(() => undefined)
        .finally(() => {
          state.refilling = false;
        });
    };

    if (state.local > 0) {
      state.local--;
      refillAhead();
      return allowed();
    }
    if (state.exhausted) return denied;
    // No local token: this request reserves for itself (and the rest of a batch for the
    // requests that follow). Concurrent requests reserve concurrently rather than queueing
    // behind one call; the script still never grants past the limit.
    return reserve(batch).then((granted) => {
      if (granted === 0) return denied;
      state.local += granted - 1;
      refillAhead();
      return allowed();
    });
  }

  private prune(now: number): void {
    for (const [id, s] of this.states) if (s.windowEnd <= now) this.states.delete(id);
  }
}
