/**
 * The `redis-sentinel://` URL form against a real Sentinel (redis-server --sentinel) that
 * monitors a real master, both private to this test.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { freePort, stopAll, waitForPort } from '@pmm/testkit';
import { createRedis, redisReady } from '@pmm/core';

describe('createRedis with a Sentinel URL', () => {
  const children: ChildProcess[] = [];
  let sentinelPort = 0;

  beforeAll(async () => {
    const masterPort = await freePort();
    sentinelPort = await freePort();
    children.push(
      spawn('redis-server', ['--port', String(masterPort), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
        stdio: 'ignore',
      }),
    );
    await waitForPort(masterPort);
    // Sentinel rewrites its config file, so it must be a writable file of its own.
    const conf = path.join(mkdtempSync(path.join(tmpdir(), 'sentinel-')), 'sentinel.conf');
    writeFileSync(
      conf,
      `port ${sentinelPort}\nbind 127.0.0.1\nsentinel monitor pmm-master 127.0.0.1 ${masterPort} 1\n`,
    );
    children.push(spawn('redis-server', [conf, '--sentinel'], { stdio: 'ignore' }));
    await waitForPort(sentinelPort);
  });

  afterAll(() => stopAll(children));

  it('behavior: resolves the master through the sentinel and runs commands on it', async () => {
    const client = createRedis(`redis-sentinel://127.0.0.1:${sentinelPort}/pmm-master`, { name: 'sentinel-test' });
    try {
      await redisReady(client, 10_000);
      await client.set('pmm-test:sentinel', 'ok', 'EX', 10);
      expect(await client.get('pmm-test:sentinel')).toBe('ok');
      expect(await client.call('ROLE')).toEqual(expect.arrayContaining(['master']));
    } finally {
      client.disconnect();
    }
  });
});
