/**
 * The gateway's cache in front of ApiKeyStore.lookupHash, so that the hot paths
 * (`GET /v2/price`, `POST /v2/swap/sign`) do not pay two Redis round trips per request. The
 * caching rules (ttl from the read's start, single flight, invalidation by `access-updated`)
 * are core's AccessCache; what is particular to keys is here.
 *
 * INVARIANT: the ttl is at most 1 s, subscribed or not, so a revoked or disabled key stops
 * working within 1 s even when an announcement is lost; with the announcement it stops at the
 * next request.
 */
import { AccessCache, type RedisClient, type RedisKeys } from '@pmm/core';
import type { ApiKeyStore, ResolvedApiKey } from './api-key-store';

export interface ApiKeyCacheOptions {
  store: ApiKeyStore;
  /** At most 1000 ms (revocation within 1 s); 0 reads Redis on every request. */
  ttlMs: number;
  /** The subscriber connection for `access-updated`; without it the ttl alone bounds staleness. */
  subscriber?: RedisClient;
  keys: RedisKeys;
  now?: () => number;
}

/** API keys by hash (undefined: unknown key); `get` rejects when Redis is unreachable. */
export class ApiKeyCache extends AccessCache<ResolvedApiKey | undefined> {
  constructor({ store, ttlMs, subscriber, keys, now }: ApiKeyCacheOptions) {
    if (ttlMs > 1_000) throw new Error('key cache ttl must be at most 1000 ms (revocation within 1 s)');
    super({
      load: (hash) => store.lookupHash(hash),
      // An integrator's change concerns every key of it: cheaper to start over than to index.
      invalidatedBy: (update) => (update.kind === 'apikey' ? { key: update.hash } : 'all'),
      ttlMs,
      subscriber,
      keys,
      now,
    });
  }
}
