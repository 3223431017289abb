/**
 * The `redis-sentinel://` URL form against a real Sentinel (redis-server --sentinel) that
 * monitors a real master, both private to this test.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createRedis, redisReady } from '@pmm/core';

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as net.AddressInfo).port;
      srv.close(() => resolve(port));
    });
  });
}

function waitForPort(port: number, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  return new Promise((resolve, reject) => {
    const attempt = () => {
      const sock = net.connect(port, '127.0.0.1');
      sock.once('connect', () => {
        sock.destroy();
        resolve();
      });
      sock.once('error', () => {
        sock.destroy();
        if (Date.now() > deadline) reject(new Error(`port ${port} not open`));
        else setTimeout(attempt, 50);
      });
    };
    attempt();
  });
}

describe('createRedis with a Sentinel URL', () => {
  const children: ChildProcess[] = [];
  let sentinelPort = 0;

  beforeAll(async () => {
    const masterPort = await freePort();
    sentinelPort = await freePort();
    children.push(spawn('redis-server', ['--port', String(masterPort), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' }));
    await waitForPort(masterPort);
    // Sentinel rewrites its config file, so it must be a writable file of its own.
    const conf = path.join(mkdtempSync(path.join(tmpdir(), 'sentinel-')), 'sentinel.conf');
    writeFileSync(conf, `port ${sentinelPort}\nbind 127.0.0.1\nsentinel monitor pmm-master 127.0.0.1 ${masterPort} 1\n`);
    children.push(spawn('redis-server', [conf, '--sentinel'], { stdio: 'ignore' }));
    await waitForPort(sentinelPort);
  });

  afterAll(async () => {
    await Promise.all(
      children.map(
        (c) =>
          new Promise<void>((resolve) => {
            if (c.exitCode !== null) return resolve();
            c.once('exit', () => resolve());
            c.kill('SIGTERM');
          }),
      ),
    );
  });

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
