/**
 * Integrator records (`pmm:integrator:<id>`, written by the gateway's CLI), read by the id the
 * gateway forwards in `X-Integrator-Id`.
 *
 * Cached in memory and invalidated through pub/sub (see IntegratorStore).
 */
import { parseIntegratorRecord, type IntegratorRecord } from '@pmm/protocol';
import { parseAccessUpdate, type MaybePromise, type RedisClient, type RedisKeys } from '@pmm/core';

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

interface Entry {
  view: IntegratorView | undefined;
  expiresAt: number;
}

/** Most cached ids; past it the cache starts over (ids come from the gateway, not the public). */
const MAX_ENTRIES = 10_000;
/** Lifetime of an entry while the subscriber is not connected (no invalidation can arrive). */
const UNSUBSCRIBED_TTL_MS = 1_000;
/** Lifetime of an entry while subscribed: a safety net only, invalidation is the rule. */
const SUBSCRIBED_TTL_MS = 60_000;

export interface IntegratorStoreOptions {
  redis: RedisClient;
  keys: RedisKeys;
  /**
   * A dedicated connection in subscriber mode for `access-updated` (may be shared with other
   * subscribers of the process). Without it, or while it is not connected, entries live
   * {@link UNSUBSCRIBED_TTL_MS}.
   */
  subscriber?: RedisClient;
  /** Overrides both lifetimes (tests: 0 means every request reads Redis). */
  ttlMs?: number;
  now?: () => number;
}

/**
 * The integrator records the sign path needs, cached in memory so that a sign request does
 * not read Redis again after the gateway did.
 *
 * INVARIANT: a change the key store writes (an integrator disabled, a whitelist edited) is
 * announced on `access-updated` and drops the entry at once; when the subscriber is not
 * connected, entries fall back to a 1 s life, and every (re)connection drops the whole cache
 * (announcements made meanwhile were lost). A read that started before an invalidation is
 * not cached. Concurrent misses for one id share a single Redis read.
 */
export class IntegratorStore implements IntegratorSource {
  private readonly cache = new Map<string, Entry>();
  private readonly pending = new Map<string, Promise<IntegratorView | undefined>>();
  /** Bumped by every invalidation: a read started under an older generation is not cached. */
  private generation = 0;
  private subscribed = false;
  private readonly channel: string;
  private readonly onMessage = (channel: string, message: string) => {
    if (channel !== this.channel) return;
    const update = parseAccessUpdate(message);
    // A key's change needs nothing here (the gateway checks keys); an integrator's does.
    if (update?.kind === 'integrator') this.invalidate(update.id);
  };
  private readonly onReady = () => {
    this.subscribed = true;
    this.invalidate();
  };
  private readonly onDown = () => {
    this.subscribed = false;
    this.invalidate();
  };

  constructor(private readonly opts: IntegratorStoreOptions) {
    this.channel = opts.keys.accessUpdated();
  }

  /** Subscribes to `access-updated` (without a subscriber: nothing). Never rejects. */
  async start(): Promise<void> {
    const sub = this.opts.subscriber;
    if (!sub) return;
    sub.on('message', this.onMessage);
    sub.on('ready', this.onReady);
    sub.on('close', this.onDown);
    try {
      await sub.subscribe(this.channel);
      this.subscribed = sub.status === 'ready';
    } catch {
      // Not subscribed yet: entries live 1 s; 'ready' switches to invalidation later.
    }
  }

  /** Unsubscribes (the caller closes the connection). */
  async close(): Promise<void> {
    const sub = this.opts.subscriber;
    if (!sub) return;
    sub.off('message', this.onMessage);
    sub.off('ready', this.onReady);
    sub.off('close', this.onDown);
    this.subscribed = false;
    if (sub.status === 'ready') await sub.unsubscribe(this.channel).catch(() => undefined);
  }

  /** Drops one id, or everything. */
  invalidate(integratorId?: string): void {
    this.generation++;
    if (integratorId === undefined) {
      this.cache.clear();
      this.pending.clear();
    } else {
      this.cache.delete(integratorId);
      this.pending.delete(integratorId);
    }
  }

  /**
   * The integrator's view (synchronously when cached), or undefined when no record exists.
   * Rejects when Redis fails (the caller answers 503) or with MalformedIntegratorError.
   */
  get(integratorId: string): MaybePromise<IntegratorView | undefined> {
    const now = (this.opts.now ?? Date.now)();
    const hit = this.cache.get(integratorId);
    if (hit && hit.expiresAt > now) return hit.view;
    const inflight = this.pending.get(integratorId);
    if (inflight) return inflight;
    const p = this.load(integratorId, now).finally(() => {
      if (this.pending.get(integratorId) === p) this.pending.delete(integratorId);
    });
    this.pending.set(integratorId, p);
    return p;
  }

  private async load(integratorId: string, now: number): Promise<IntegratorView | undefined> {
    const generation = this.generation;
    const ttl = this.opts.ttlMs ?? (this.subscribed ? SUBSCRIBED_TTL_MS : UNSUBSCRIBED_TTL_MS);
    const text = await this.opts.redis.get(this.opts.keys.integrator(integratorId));
    const view = text === null ? undefined : integratorView(integratorId, text);
    if (generation === this.generation && ttl > 0) {
      if (this.cache.size >= MAX_ENTRIES) this.cache.clear();
      this.cache.set(integratorId, { view, expiresAt: now + ttl });
    }
    return view;
  }
}
