/**
 * Integrator records (`pmm:integrator:<id>`, written by the gateway's CLI), read by the id the
 * gateway forwards in `X-Integrator-Id`.
 *
 * A short cache (default 1 s) absorbs bursts from one integrator without making a revoked
 * whitelist entry or a disabled integrator linger: a change is seen within `ttlMs`.
 * Concurrent misses for one id share a single Redis read (core's ReadThroughCache).
 */
import { parseIntegratorRecord, type IntegratorRecord } from '@pmm/protocol';
import { ReadThroughCache, type RedisClient, type RedisKeys } from '@pmm/core';

/** A record prepared for the sign path (lookups are O(1), overrides already parsed). */
export interface IntegratorView {
  record: IntegratorRecord;
  /** Lowercase addresses. */
  whitelist: ReadonlySet<string>;
  /** Empty: every served chain. */
  chains: ReadonlySet<number>;
  /** Per-chain originRate overrides. */
  originRates: ReadonlyMap<number, bigint>;
}

/** What the sign path needs from an integrator source (tests may pass a fake). */
export interface IntegratorSource {
  get(integratorId: string): Promise<IntegratorView | undefined>;
}

/**
 * Parses a stored record with the protocol's one parser and prepares its view.
 * @throws MalformedIntegratorError (the request then fails with 500: an operator error)
 */
export function integratorView(integratorId: string, text: string): IntegratorView {
  const record = parseIntegratorRecord(integratorId, text);
  const originRates = new Map<number, bigint>();
  for (const [chain, value] of Object.entries(record.originRate ?? {})) originRates.set(Number(chain), BigInt(value));
  return { record, whitelist: new Set(record.whitelist), chains: new Set(record.chains), originRates };
}

export class IntegratorStore implements IntegratorSource {
  private readonly cache: ReadThroughCache<IntegratorView | undefined>;

  constructor(opts: { redis: RedisClient; keys: RedisKeys; ttlMs?: number; now?: () => number }) {
    this.cache = new ReadThroughCache({
      ttlMs: opts.ttlMs ?? 1_000,
      now: opts.now,
      load: async (integratorId) => {
        const text = await opts.redis.get(opts.keys.integrator(integratorId));
        return text === null ? undefined : integratorView(integratorId, text);
      },
    });
  }

  /**
   * The integrator's view, or undefined when no record exists. Rejects when Redis fails
   * (the caller answers 503) or with MalformedIntegratorError.
   */
  get(integratorId: string): Promise<IntegratorView | undefined> {
    return Promise.resolve(this.cache.get(integratorId));
  }
}
