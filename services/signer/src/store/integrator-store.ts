/**
 * Integrator records (`pmm:integrator:<id>`, written by the gateway's CLI), read by the id the
 * gateway forwards in `X-Integrator-Id`.
 *
 * A short cache (default 1 s) absorbs bursts from one integrator without making a revoked
 * whitelist entry or a disabled integrator linger: a change is seen within `ttlMs`.
 * Concurrent misses for one id share a single Redis read.
 */
import { UINT256_MAX, type IntegratorRecord, type RedisClient, type RedisKeys } from '@pmm/core';

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

/** A record that is in Redis but unusable (operator error): the request fails with 500. */
export class MalformedIntegratorError extends Error {
  constructor(integratorId: string, reason: string) {
    super(`integrator ${integratorId}: malformed record: ${reason}`);
    this.name = 'MalformedIntegratorError';
  }
}

/** Validates the JSON of a record and prepares its view. */
export function integratorView(integratorId: string, text: string): IntegratorView {
  let r: Partial<IntegratorRecord>;
  try {
    r = JSON.parse(text) as Partial<IntegratorRecord>;
  } catch {
    throw new MalformedIntegratorError(integratorId, 'not JSON');
  }
  const bad = (reason: string) => new MalformedIntegratorError(integratorId, reason);
  if (typeof r !== 'object' || r === null) throw bad('not an object');
  if (!Array.isArray(r.whitelist) || !r.whitelist.every((a) => typeof a === 'string')) throw bad('whitelist');
  if (r.chains !== undefined && (!Array.isArray(r.chains) || !r.chains.every((c) => Number.isSafeInteger(c))))
    throw bad('chains');
  if (typeof r.disabled !== 'boolean') throw bad('disabled');
  const originRates = new Map<number, bigint>();
  if (r.originRate !== undefined) {
    if (typeof r.originRate !== 'object' || r.originRate === null) throw bad('originRate');
    for (const [chain, value] of Object.entries(r.originRate)) {
      if (
        !/^[0-9]+$/.test(chain) ||
        typeof value !== 'string' ||
        !/^(0|[1-9][0-9]*)$/.test(value) ||
        BigInt(value) > UINT256_MAX
      ) {
        throw bad(`originRate.${chain}`);
      }
      originRates.set(Number(chain), BigInt(value));
    }
  }
  return {
    record: r as IntegratorRecord,
    // Stored lowercase by contract; lowercased again so a hand-edited record still works.
    whitelist: new Set(r.whitelist.map((a) => a.toLowerCase())),
    chains: new Set(r.chains ?? []),
    originRates,
  };
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
