/**
 * A short-lived in-process cache in front of ApiKeyStore.lookupHash, so that the hot path
 * (`GET /v2/price`) does not pay two Redis round trips per request.
 *
 * INVARIANT: an entry is used only until `fetchStartedAt + ttlMs` (ttlMs ≤ 1000), measured
 * from the moment the Redis read was STARTED, so a revocation, a disabled flag or a changed
 * whitelist takes effect within `ttlMs` of being written. Unknown keys are cached too (a
 * flood of bad keys must not become a flood of Redis reads), in a bounded map.
 * Concurrent misses for one key share one Redis read (single flight).
 */
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

  constructor(
    private readonly store: ApiKeyStore,
    private readonly ttlMs: number,
    private readonly now: () => number = Date.now,
  ) {
    if (ttlMs > 1_000) throw new Error('key cache ttl must be at most 1000 ms (revocation within 1 s)');
  }

  /** The key by its hash; undefined when unknown. Rejects when Redis is unreachable. */
  lookup(hash: string): Promise<ResolvedApiKey | undefined> | ResolvedApiKey | undefined {
    const hit = this.entries.get(hash);
    if (hit && hit.expiresAt > this.now()) return hit.value;
    const running = this.inflight.get(hash);
    if (running) return running;
    const startedAt = this.now();
    const p = this.store.lookupHash(hash).then(
      (value) => {
        this.inflight.delete(hash);
        if (this.ttlMs > 0) {
          if (this.entries.size >= MAX_ENTRIES) this.entries.clear();
          this.entries.set(hash, { value, expiresAt: startedAt + this.ttlMs });
        }
        return value;
      },
      (err: unknown) => {
        this.inflight.delete(hash);
        throw err;
      },
    );
    this.inflight.set(hash, p);
    return p;
  }
}
