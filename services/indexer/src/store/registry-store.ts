/**
 * The chain's pair registry in Redis (`pmm:{<id>}:pairs`, JSON PairRegistry), announced on
 * the update channel (core's encodeChainUpdate, type `pairs`). Every replica rewrites
 * it at each refresh (the writes are idempotent). It carries a TTL of {@link registryTtlMs}, long
 * beside the refresh period, so that a chain nobody indexes any more does not leave its registry
 * in Redis for ever (Redis runs with noeviction: only integrator data should stay).
 */
import type { PairRegistry } from '@pmm/protocol';
import { encodeChainUpdate, type RedisClient } from '@pmm/core';

export interface RegistryStore {
  write(registry: PairRegistry): Promise<void>;
}

/** Life of a written registry: ten refresh periods, and at least an hour. */
export function registryTtlMs(refreshMs: number): number {
  return Math.max(10 * refreshMs, 3_600_000);
}

export function createRegistryStore(
  redis: RedisClient,
  keys: { pairs: string; updates: string },
  ttlMs: number,
): RegistryStore {
  return {
    async write(registry) {
      const message = encodeChainUpdate({
        type: 'pairs',
        chainId: registry.chainId,
        blockNumber: registry.blockNumber,
      });
      // MULTI: readers never see the announcement without the value (the keys share a slot).
      const result = await redis
        .multi()
        .set(keys.pairs, JSON.stringify(registry), 'PX', ttlMs)
        .publish(keys.updates, message)
        .exec();
      const failed = result?.find(([err]) => err);
      if (!result || failed) throw failed?.[0] ?? new Error('registry write aborted');
    },
  };
}
