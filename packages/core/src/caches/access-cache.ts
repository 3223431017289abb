/**
 * The in-process cache in front of the records the key store writes (API keys, integrators),
 * kept fresh by the key store's announcements on `access-updated` (access-updates.ts). The
 * gateway's key cache and the signer's integrator cache are this class with their own loader
 * and their own rule for which entries an announcement drops.
 *
 * INVARIANTS (each one is what makes a revoked key or a disabled integrator stop at once):
 * - an entry lives `ttlMs`, subscribed or not, counted from the moment its Redis read STARTED,
 *   so a write is never hidden for longer than that, even when its announcement is lost
 *   (announcements make it at once; the ttl is the bound the docs promise);
 * - a read that started before an invalidation is not cached (a generation counter);
 * - every (re)connection and every loss of the subscriber drops everything: pub/sub keeps no
 *   backlog, so announcements made meanwhile are lost;
 * - concurrent misses for one key share one Redis read (single flight);
 * - misses are cached too (a flood of unknown keys must not become a flood of Redis reads),
 *   in a map that starts over past {@link MAX_ENTRIES}.
 *
 * A hit is returned synchronously (no promise): this is on the sign and price hot paths.
 */
import { parseAccessUpdate, type AccessUpdate } from './access-updates';
import type { MaybePromise } from './maybe-async';
import type { RedisClient } from '../redis/redis-client';
import type { RedisKeys } from '../redis/redis-keys';

/** What an announcement means for one cache: drop one entry, every entry, or nothing. */
export type AccessInvalidation = { key: string } | 'all' | 'none';

export interface AccessCacheOptions<V> {
  /** Reads one entry (from Redis); a rejection is passed on and nothing is cached. */
  load(key: string): Promise<V>;
  /** Which entries an announcement on `access-updated` drops. */
  invalidatedBy(update: AccessUpdate): AccessInvalidation;
  /** Lifetime of an entry, subscribed or not (the bound on a lost announcement); 0: no caching. */
  ttlMs: number;
  /** A connection in subscriber mode (may be shared; the caller closes it). Without it: ttl only. */
  subscriber?: RedisClient;
  keys: RedisKeys;
  now?: () => number;
}

interface Entry<V> {
  value: V;
  expiresAt: number;
}

/** Most cached keys; past it the cache starts over (cheap, and it only costs Redis reads). */
const MAX_ENTRIES = 10_000;

export class AccessCache<V> {
  private readonly entries = new Map<string, Entry<V>>();
  private readonly inflight = new Map<string, Promise<V>>();
  /** Bumped by every invalidation: a read started under an older generation is not cached. */
  private generation = 0;
  private readonly channel: string;
  private readonly now: () => number;
  private readonly onMessage = (channel: string, message: string) => {
    if (channel !== this.channel) return;
    const update = parseAccessUpdate(message);
    if (!update) return;
    const dropped = this.opts.invalidatedBy(update);
    if (dropped === 'all') this.invalidate();
    else if (dropped !== 'none') this.invalidate(dropped.key);
  };
  private readonly onReady = () => this.invalidate();
  private readonly onDown = () => this.invalidate();

  constructor(private readonly opts: AccessCacheOptions<V>) {
    this.channel = opts.keys.accessUpdated();
    this.now = opts.now ?? Date.now;
  }

  /**
   * Listens to `access-updated` (without a subscriber: nothing). Never rejects: until the
   * subscription holds, only the ttl bounds an entry; the subscriber's 'ready' starts over.
   */
  async start(): Promise<void> {
    const sub = this.opts.subscriber;
    if (!sub) return;
    this.listen(sub, 'on');
    try {
      await sub.subscribe(this.channel);
    } catch {
      // Not subscribed (Redis down): the short ttl bounds how long a revoked key works.
    }
  }

  /** Stops listening and unsubscribes; never rejects. */
  async stop(): Promise<void> {
    const sub = this.opts.subscriber;
    if (!sub) return;
    this.listen(sub, 'off');
    if (sub.status === 'ready') await sub.unsubscribe(this.channel).catch(() => undefined);
  }

  private listen(sub: RedisClient, how: 'on' | 'off'): void {
    sub[how]('message', this.onMessage);
    sub[how]('ready', this.onReady);
    sub[how]('close', this.onDown);
  }

  /** Drops one key, or everything. */
  invalidate(key?: string): void {
    this.generation++;
    if (key === undefined) {
      this.entries.clear();
      this.inflight.clear();
    } else {
      this.entries.delete(key);
      this.inflight.delete(key);
    }
  }

  /** The entry: synchronously when cached, else a promise of the read (rejects when it fails). */
  get(key: string): MaybePromise<V> {
    const startedAt = this.now();
    const hit = this.entries.get(key);
    if (hit && hit.expiresAt > startedAt) return hit.value;
    const running = this.inflight.get(key);
    if (running) return running;
    const generation = this.generation;
    const ttl = this.opts.ttlMs;
    const p = this.opts.load(key).then(
      (value) => {
        if (this.inflight.get(key) === p) this.inflight.delete(key);
        if (ttl > 0 && generation === this.generation) {
          if (this.entries.size >= MAX_ENTRIES) this.entries.clear();
          this.entries.set(key, { value, expiresAt: startedAt + ttl });
        }
        return value;
      },
      (err: unknown) => {
        if (this.inflight.get(key) === p) this.inflight.delete(key);
        throw err;
      },
    );
    this.inflight.set(key, p);
    return p;
  }
}
