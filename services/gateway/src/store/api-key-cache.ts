/**
 * A short-lived in-process cache in front of ApiKeyStore.lookupHash, so that the hot path
 * (`GET /v2/price`) does not pay two Redis round trips per request (core's ReadThroughCache).
 *
 * INVARIANT: an entry is used only until `fetchStartedAt + ttlMs` (ttlMs ≤ 1000), measured
 * from the moment the Redis read was STARTED, so a revocation, a disabled flag or a changed
 * whitelist takes effect within `ttlMs` of being written. Unknown keys are cached too (a
 * flood of bad keys must not become a flood of Redis reads), in a bounded map.
 * Concurrent misses for one key share one Redis read (single flight).
 */
import { ReadThroughCache } from '@pmm/core';
import type { ApiKeyStore, ResolvedApiKey } from './api-key-store';

export class ApiKeyCache {
  private readonly cache: ReadThroughCache<ResolvedApiKey | undefined>;

  constructor(store: ApiKeyStore, ttlMs: number, now: () => number = Date.now) {
    if (ttlMs > 1_000) throw new Error('key cache ttl must be at most 1000 ms (revocation within 1 s)');
    this.cache = new ReadThroughCache({ ttlMs, now, load: (hash) => store.lookupHash(hash) });
  }

  /** The key by its hash; undefined when unknown. Rejects when Redis is unreachable. */
  lookup(hash: string): Promise<ResolvedApiKey | undefined> | ResolvedApiKey | undefined {
    return this.cache.get(hash);
  }
}
