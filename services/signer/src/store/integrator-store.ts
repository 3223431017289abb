/**
 * Integrator records (`pmm:integrator:<id>`, written by the gateway's CLI), read by the id the
 * gateway forwards in `X-Integrator-Id`.
 *
 * Cached in memory and invalidated through pub/sub (core's AccessCache, see IntegratorStore).
 */
import { parseIntegratorRecord, type IntegratorRecord } from '@pmm/protocol';
import { AccessCache, type MaybePromise, type RedisClient, type RedisKeys } from '@pmm/core';

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
  /** Synchronous when the record is at hand (the cache), else a promise. */
  get(integratorId: string): MaybePromise<IntegratorView | undefined>;
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

/**
 * Lifetime of an entry, subscribed or not: an announcement drops it at once, and when one is
 * lost (pub/sub keeps no backlog) a disabled integrator or a narrowed whitelist still takes
 * effect within 1 s, as the gateway's key cache and docs/operations/keys.md#api-keys promise. The cost is
 * one Redis read per integrator and second per signer.
 */
export const INTEGRATOR_TTL_MS = 1_000;

export interface IntegratorStoreOptions {
  redis: RedisClient;
  keys: RedisKeys;
  /**
   * A dedicated connection in subscriber mode for `access-updated` (may be shared with other
   * subscribers of the process). With or without it, entries live {@link INTEGRATOR_TTL_MS}.
   */
  subscriber?: RedisClient;
  /** Overrides the lifetime (tests: 0 means every request reads Redis). */
  ttlMs?: number;
  now?: () => number;
}

/**
 * The integrator records the sign path needs, cached in memory so that a sign request does
 * not read Redis again after the gateway did. The caching rules (invalidation by
 * `access-updated`, single flight, a read started before an invalidation not cached) are
 * core's AccessCache; `get` rejects when Redis fails (the caller answers 503) or with
 * MalformedIntegratorError.
 */
export class IntegratorStore extends AccessCache<IntegratorView | undefined> implements IntegratorSource {
  constructor({ redis, keys, subscriber, ttlMs, now }: IntegratorStoreOptions) {
    super({
      load: async (integratorId) => {
        const text = await redis.get(keys.integrator(integratorId));
        return text === null ? undefined : integratorView(integratorId, text);
      },
      // A key's change needs nothing here (the gateway checks keys); an integrator's does.
      invalidatedBy: (update) => (update.kind === 'integrator' ? { key: update.id } : 'none'),
      ttlMs: ttlMs ?? INTEGRATOR_TTL_MS,
      subscriber,
      keys,
      now,
    });
  }
}
