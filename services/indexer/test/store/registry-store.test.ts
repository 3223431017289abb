/** The pair registry in Redis expires unless rewritten (real Redis, random key prefix). */
import { createRedis, redisReady, type RedisClient } from '@pmm/core';
import { type PairRegistry } from '@pmm/protocol';
import { createRegistryStore, registryTtlMs } from '../../src/store/registry-store';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const prefix = `registry-ttl-${process.pid}-${Date.now()}`;
let redis: RedisClient;

beforeAll(async () => {
  redis = createRedis(REDIS_URL, { name: 'registry-store-test' });
  await redisReady(redis);
});
afterAll(async () => {
  await redis.del(`${prefix}:pairs`);
  redis.disconnect();
});

describe('registry store', () => {
  it('behavior: the registry is written with a TTL of ten refresh periods, at least an hour', async () => {
    expect(registryTtlMs(60_000)).toBe(3_600_000);
    expect(registryTtlMs(600_000)).toBe(6_000_000);
    const store = createRegistryStore(redis, { pairs: `${prefix}:pairs`, updates: `${prefix}:updates` }, 5_000);
    await store.write({ chainId: 8453, blockNumber: 1 } as unknown as PairRegistry);
    const ttl = await redis.pttl(`${prefix}:pairs`);
    expect(ttl).toBeGreaterThan(4_000);
    expect(ttl).toBeLessThanOrEqual(5_000);
  });
});
