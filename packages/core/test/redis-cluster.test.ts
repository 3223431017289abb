/**
 * The `redis-cluster://` URL form against a real three-master Redis Cluster private to this
 * test, and the hash tags of the key layout: one chain's keys live in one slot, so a Lua
 * script or MULTI over them works in a Cluster.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { Cluster } from 'ioredis';
import { freePort, sampleAuditRecord, stopAll, waitForPort } from '@pmm/testkit';
import { createRedis, redisKeys, redisReady } from '@pmm/core';
import { AuditReader, DAY_MS, RedisAuditTrail } from '@pmm/signer';

describe('createRedis with a Cluster URL', () => {
  const children: ChildProcess[] = [];
  const ports: number[] = [];

  beforeAll(async () => {
    // Cluster bus ports are port + 10000: pick ports whose bus port is free too.
    while (ports.length < 3) {
      const p = await freePort();
      if (p + 10_000 < 65_536 && !ports.includes(p)) ports.push(p);
    }
    for (const port of ports) {
      const dir = mkdtempSync(`${tmpdir()}/cluster-${port}-`);
      children.push(
        spawn(
          'redis-server',
          [
            '--port',
            String(port),
            '--bind',
            '127.0.0.1',
            '--cluster-enabled',
            'yes',
            '--cluster-config-file',
            `${dir}/nodes.conf`,
            '--save',
            '',
            '--appendonly',
            'no',
            '--dir',
            dir,
          ],
          { stdio: 'ignore' },
        ),
      );
    }
    await Promise.all(ports.map((p) => waitForPort(p)));
    const create = spawnSync(
      'redis-cli',
      ['--cluster', 'create', ...ports.map((p) => `127.0.0.1:${p}`), '--cluster-replicas', '0', '--cluster-yes'],
      {
        encoding: 'utf8',
        timeout: 30_000,
      },
    );
    if (create.status !== 0) throw new Error(`cluster create failed: ${create.stdout} ${create.stderr}`);
  }, 60_000);

  afterAll(() => stopAll(children));

  it("behavior: commands reach the right master; one chain's keys share a slot (hash tag)", async () => {
    const client = createRedis(`redis-cluster://${ports.map((p) => `127.0.0.1:${p}`).join(',')}`, {
      name: 'cluster-test',
    });
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

  it("behavior: the audit trail (one script over a chain's stream and signature index) writes and reads back", async () => {
    const client = createRedis(`redis-cluster://${ports.map((p) => `127.0.0.1:${p}`).join(',')}`, {
      name: 'cluster-audit',
      autoPipelining: true,
    });
    try {
      await redisReady(client, 15_000);
      const keys = redisKeys('pmm-audit-test');
      const trail = new RedisAuditTrail({ redis: client, keys, retentionMs: DAY_MS });
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
});
