/**
 * Redis's persistence and memory as metrics (redis-health-metrics.ts), read from real
 * redis-server processes configured the ways the alert rules look for: the figures follow the
 * server's settings, and a stopped Redis reports `_up 0` within the timeout instead of stalling
 * the scrape.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createMetrics, createRedis, redisHealthMetrics, redisReady, type RedisClient } from '@pmm/core';
import { privateRedis, type PrivateRedis } from '@pmm/testkit';

const servers: PrivateRedis[] = [];
const clients: RedisClient[] = [];
const dirs: string[] = [];
afterAll(async () => {
  for (const c of clients) c.disconnect();
  await Promise.all(servers.map((s) => s.stop('SIGTERM')));
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** A fresh redis-server with `args`, its client, and the exposition text of the gauges. */
async function scrapeWith(args: string[]) {
  const dir = mkdtempSync(path.join(tmpdir(), 'redis-health-'));
  dirs.push(dir);
  const server = await privateRedis({ dir, args });
  servers.push(server);
  const redis = createRedis(server.url, { name: 'health-test' });
  clients.push(redis);
  await redisReady(redis);
  const metrics = createMetrics('health-test', { defaultMetrics: false });
  redisHealthMetrics(metrics, redis, 'gateway');
  const value = async (name: string) => {
    const text = await metrics.registry.metrics();
    const m = new RegExp(
      `^gateway_redis_${name}\\{[^}]*node="127\\.0\\.0\\.1:${server.port}"[^}]*\\} (\\S+)$`,
      'm',
    ).exec(text);
    return m ? Number(m[1]) : undefined;
  };
  return { server, value };
}

describe('Redis health metrics', () => {
  it('behavior: a Redis as operations/redis.md asks (AOF, noeviction, a maxmemory) reads up, AOF on, not evicting, its memory', async () => {
    const { value } = await scrapeWith([
      '--appendonly',
      'yes',
      '--maxmemory-policy',
      'noeviction',
      '--maxmemory',
      '64mb',
    ]);
    expect(await value('up')).toBe(1);
    expect(await value('aof_enabled')).toBe(1);
    expect(await value('evicting')).toBe(0);
    expect(await value('maxmemory_bytes')).toBe(64 * 1024 * 1024);
    expect(await value('memory_used_bytes')).toBeGreaterThan(100_000);
  });

  it('error: persistence off, an evicting policy and no memory limit each show', async () => {
    const { value } = await scrapeWith(['--maxmemory-policy', 'allkeys-lru']);
    expect(await value('aof_enabled')).toBe(0);
    expect(await value('evicting')).toBe(1);
    expect(await value('maxmemory_bytes')).toBe(0);
  });

  it('fault: a stopped Redis is up 0 within about a second, the scrape still answers', async () => {
    const { server, value } = await scrapeWith([]);
    expect(await value('up')).toBe(1);
    await server.stop('SIGKILL');
    // Past the 5 s cache, the next scrape reads again.
    await new Promise((r) => setTimeout(r, 5_100));
    const started = Date.now();
    expect(await value('up')).toBe(0);
    expect(Date.now() - started).toBeLessThan(3_000);
  }, 20_000);
});
