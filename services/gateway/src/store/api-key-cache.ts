/**
 * A short-lived in-process cache in front of ApiKeyStore.lookupHash, so that the hot path
 * (`GET /v2/price`) does not pay two Redis round trips per request.
 *
 * INVARIANT: an entry is used only until `fetchStartedAt + ttlMs` (ttlMs ≤ 1000), measured
 * from the moment the Redis read was STARTED, so a revocation, a disabled flag or a changed
 * whitelist takes effect within `ttlMs` of being written. Unknown keys are cached too (a
 * flood of bad keys must not become a flood of Redis reads), in a bounded map.
 * Concurrent misses for one key share one Redis read (single flight).
 *
 * With a subscriber, the key store's announcements on `access-updated` (a key revoked or
 * disabled, an integrator changed) also drop entries at once, so that a revoked key stops
 * working at the next request rather than within `ttlMs`; a read started before such an
 * announcement is not cached.
 */
import { parseAccessUpdate, type RedisClient } from '@pmm/core';
import type { ApiKeyStore, ResolvedApiKey } from './api-key-store';

interface Entry {
  value: ResolvedApiKey | undefined;
  expiresAt: number;
}

/** Upper bound on cached keys; past it the cache is cleared (cheap, and only costs Redis reads). */
const MAX_ENTRIES = 10_000;

export class ApiKeyCache {
  private readonly entries = new Map<string, Entry>();
  private readonly inflight = new Map<string, Promise<ResolvedApiKey | undefined>>();
  /** Bumped by every invalidation: a read started under an older generation is not cached. */
  private generation = 0;
  private subscription?: { subscriber: RedisClient; channel: string };
  private readonly onMessage = (channel: string, message: string) => {
    if (channel !== this.subscription?.channel) return;
    const update = parseAccessUpdate(message);
    // An integrator's change concerns every key of it: cheaper to start over than to index.
    if (update?.kind === 'apikey') this.invalidate(update.hash);
    else if (update?.kind === 'integrator') this.invalidate();
  };
  private readonly onReconnect = () => this.invalidate();

  constructor(
    private readonly store: ApiKeyStore,
    private readonly ttlMs: number,
    private readonly now: () => number = Date.now,
  ) {
    if (ttlMs > 1_000) throw new Error('key cache ttl must be at most 1000 ms (revocation within 1 s)');
  }

  /**
   * Listens to `channel` (the key store's `access-updated`) on `subscriber`. Never rejects:
   * without the subscription the ttl still bounds how long a revoked key works.
   */
  async subscribe(subscriber: RedisClient, channel: string): Promise<void> {
    this.subscription = { subscriber, channel };
    subscriber.on('message', this.onMessage);
    // Announcements made while the connection was down are lost: start over on each (re)connection.
    subscriber.on('ready', this.onReconnect);
    subscriber.on('close', this.onReconnect);
    await subscriber.subscribe(channel).catch(() => undefined);
  }

  async unsubscribe(): Promise<void> {
    const sub = this.subscription;
    if (!sub) return;
    this.subscription = undefined;
    sub.subscriber.off('message', this.onMessage);
    sub.subscriber.off('ready', this.onReconnect);
    sub.subscriber.off('close', this.onReconnect);
    if (sub.subscriber.status === 'ready') await sub.subscriber.unsubscribe(sub.channel).catch(() => undefined);
  }

  /** Drops one key by hash, or everything. */
  invalidate(hash?: string): void {
    this.generation++;
    if (hash === undefined) {
      this.entries.clear();
      this.inflight.clear();
    } else {
      this.entries.delete(hash);
      this.inflight.delete(hash);
    }
  }

  /** The key by its hash; undefined when unknown. Rejects when Redis is unreachable. */
  lookup(hash: string): Promise<ResolvedApiKey | undefined> | ResolvedApiKey | undefined {
    const hit = this.entries.get(hash);
    if (hit && hit.expiresAt > this.now()) return hit.value;
    const running = this.inflight.get(hash);
    if (running) return running;
    const startedAt = this.now();
    const generation = this.generation;
    const p = this.store.lookupHash(hash).then(
      (value) => {
        if (this.inflight.get(hash) === p) this.inflight.delete(hash);
        if (this.ttlMs > 0 && generation === this.generation) {
          if (this.entries.size >= MAX_ENTRIES) this.entries.clear();
          this.entries.set(hash, { value, expiresAt: startedAt + this.ttlMs });
        }
        return value;
      },
      (err: unknown) => {
        if (this.inflight.get(hash) === p) this.inflight.delete(hash);
        throw err;
      },
    );
    this.inflight.set(hash, p);
    return p;
  }
}
