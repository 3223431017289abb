/**
 * The audit trail in a real three-master Redis Cluster: its one script spans a chain's
 * stream and signature index, which the hash tag keeps in one slot.
 */
import { privateRedisCluster, sampleAuditRecord, type PrivateRedisCluster } from '@pmm/testkit';
import { DAY_MS, DurableWrites, createRedis, redisKeys, redisReady } from '@pmm/core';
import { AuditReader } from '@pmm/operator';
import { RedisAuditTrail } from '../../src';

let cluster: PrivateRedisCluster;

beforeAll(async () => {
  cluster = await privateRedisCluster();
}, 60_000);

afterAll(() => cluster?.stop());

it('behavior: the audit trail writes and reads back on every chain', async () => {
  const client = createRedis(cluster.url, { name: 'cluster-audit' });
  try {
    await redisReady(client, 15_000);
    const keys = redisKeys('pmm-audit-test');
    const trail = new RedisAuditTrail({
      keys,
      retentionMs: DAY_MS,
      durability: DurableWrites.unconfirmed(client),
    });
    const reader = new AuditReader(client, keys);
    const timestamp = Math.floor(Date.now() / 1000);
    for (const chainId of [8453, 56, 4663]) {
      const signature = `0x${chainId.toString(16).padStart(130, '0')}`;
      await trail.record(sampleAuditRecord(0, { chainId, requestId: `r-${chainId}`, timestamp, signature }));
      const found = await reader.bySignature(chainId, signature, timestamp);
      expect(found.map((e) => e.record.requestId)).toEqual([`r-${chainId}`]);
    }
    const listed = [];
    for await (const e of reader.list({ chains: [8453, 56, 4663] })) listed.push(e.record.chainId);
    expect(listed).toEqual([8453, 56, 4663]);
  } finally {
    client.disconnect();
  }
}, 30_000);
