/**
 * The `redis-cluster://` URL form against a real three-master Redis Cluster private to this
 * test, and the hash tags of the key layout: one chain's keys live in one slot, so a Lua
 * script or MULTI over them works in a Cluster (the signer's audit-trail-cluster test runs
 * its script there).
 */
import { Cluster } from 'ioredis';
import { privateRedisCluster, type PrivateRedisCluster } from '@pmm/testkit';
import { createRedis, redisKeys, redisReady } from '@pmm/core';

describe('createRedis with a Cluster URL', () => {
  let cluster: PrivateRedisCluster;

  beforeAll(async () => {
    cluster = await privateRedisCluster();
  }, 60_000);

  afterAll(() => cluster?.stop());

  it("behavior: commands reach the right master; one chain's keys share a slot (hash tag)", async () => {
    const client = createRedis(cluster.url, { name: 'cluster-test' });
    expect(client).toBeInstanceOf(Cluster);
    try {
      await redisReady(client, 15_000);
      const keys = redisKeys('pmm-test');
      for (const chainId of [8453, 56, 4663]) {
        const book = keys.book(chainId);
        const pairs = keys.pairs(chainId);
        // A multi-key command across both keys would fail with CROSSSLOT without the hash tag.
        await client.mset(book, `book-${chainId}`, pairs, `pairs-${chainId}`);
        expect(await client.mget(book, pairs)).toEqual([`book-${chainId}`, `pairs-${chainId}`]);
        expect(await client.call('CLUSTER', 'KEYSLOT', book)).toBe(await client.call('CLUSTER', 'KEYSLOT', pairs));
      }
    } finally {
      client.disconnect();
    }
  }, 30_000);
});
