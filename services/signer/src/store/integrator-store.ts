/**
 * Integrator records (`pmm:integrator:<id>`, written by the gateway's CLI), read by the id the
 * gateway forwards in `X-Integrator-Id`.
 *
 * A short cache (default 1 s) absorbs bursts from one integrator without making a revoked
 * whitelist entry or a disabled integrator linger: a change is seen within `ttlMs`.
 * Concurrent misses for one id share a single Redis read.
 */
import { parseIntegratorRecord, type IntegratorRecord } from '@pmm/protocol';
import { type RedisClient, type RedisKeys } from '@pmm/core';

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

interface Entry {
  view: IntegratorView | undefined;
  expiresAt: number;
}

/** Most cached ids; past it the cache starts over (ids come from the gateway, not the public). */
const MAX_ENTRIES = 10_000;

export class IntegratorStore implements IntegratorSource {
  private readonly cache = new Map<string, Entry>();
  private readonly pending = new Map<string, Promise<IntegratorView | undefined>>();

  constructor(private readonly opts: { redis: RedisClient; keys: RedisKeys; ttlMs?: number; now?: () => number }) {}

  /**
   * The integrator's view, or undefined when no record exists. Rejects when Redis fails
   * (the caller answers 503) or with {@link MalformedIntegratorError}.
   */
  get(integratorId: string): Promise<IntegratorView | undefined> {
    const now = (this.opts.now ?? Date.now)();
    const hit = this.cache.get(integratorId);
    if (hit && hit.expiresAt > now) return Promise.resolve(hit.view);
    const inflight = this.pending.get(integratorId);
    if (inflight) return inflight;
    const p = this.load(integratorId, now).finally(() => this.pending.delete(integratorId));
    this.pending.set(integratorId, p);
    return p;
  }

  private async load(integratorId: string, now: number): Promise<IntegratorView | undefined> {
    const text = await this.opts.redis.get(this.opts.keys.integrator(integratorId));
    const view = text === null ? undefined : integratorView(integratorId, text);
    if (this.cache.size >= MAX_ENTRIES) this.cache.clear();
    this.cache.set(integratorId, { view, expiresAt: now + (this.opts.ttlMs ?? 1_000) });
    return view;
  }
}
