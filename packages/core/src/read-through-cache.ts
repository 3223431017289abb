/**
 * A short-lived in-process cache in front of a Redis read, for records an operator may change
 * at any moment (API keys, integrators):
 * - an entry is used only until `readStartedAt + ttlMs`, measured from when the read STARTED,
 *   so a change written to Redis is seen within `ttlMs`;
 * - absent records are cached too (a flood of unknown ids must not become a flood of reads);
 * - concurrent misses for one key share one read (single flight); a failed read is not cached;
 * - bounded: past `maxEntries` the cache starts over (cheap, and only costs reads).
 */
export interface ReadThroughCacheOptions<V> {
  /** 0 disables caching (every get reads; concurrent ones still share the read). */
  ttlMs: number;
  load(key: string): Promise<V>;
  maxEntries?: number;
  now?: () => number;
}

export class ReadThroughCache<V> {
  private readonly entries = new Map<string, { value: V; expiresAt: number }>();
  private readonly inflight = new Map<string, Promise<V>>();
  private readonly now: () => number;

  constructor(private readonly opts: ReadThroughCacheOptions<V>) {
    this.now = opts.now ?? Date.now;
  }

  /** The cached value (synchronously, on a hit) or the read's promise; rejects when the read fails. */
  get(key: string): V | Promise<V> {
    const hit = this.entries.get(key);
    const now = this.now();
    if (hit && hit.expiresAt > now) return hit.value;
    const running = this.inflight.get(key);
    if (running) return running;
    const p = this.opts.load(key).then(
      (value) => {
        this.inflight.delete(key);
        if (this.opts.ttlMs > 0) {
          if (this.entries.size >= (this.opts.maxEntries ?? 10_000)) this.entries.clear();
          this.entries.set(key, { value, expiresAt: now + this.opts.ttlMs });
        }
        return value;
      },
      (err: unknown) => {
        this.inflight.delete(key);
        throw err;
      },
    );
    this.inflight.set(key, p);
    return p;
  }
}
