/**
 * The chain's pair registry in Redis (`pmm:{<id>}:pairs`, JSON PairRegistry), announced on
 * the update channel as `{"type":"pairs","chainId":N,"blockNumber":N}`. No TTL: the signer
 * validates pairs against it, and the list of listed tokens does not go stale with time the
 * way a price does; every replica rewrites it at each refresh (the writes are idempotent).
 */
import type { PairRegistry, RedisClient } from '@pmm/core';

export interface RegistryStore {
  write(registry: PairRegistry): Promise<void>;
}

export function createRegistryStore(redis: RedisClient, keys: { pairs: string; updates: string }): RegistryStore {
  return {
    async write(registry) {
      const message = JSON.stringify({ type: 'pairs', chainId: registry.chainId, blockNumber: registry.blockNumber });
      // MULTI: readers never see the announcement without the value (the keys share a slot).
      const result = await redis
        .multi()
        .set(keys.pairs, JSON.stringify(registry))
        .publish(keys.updates, message)
        .exec();
      const failed = result?.find(([err]) => err);
      if (!result || failed) throw failed?.[0] ?? new Error('registry write aborted');
    },
  };
}
