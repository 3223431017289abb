/**
 * The start-up check of Redis persistence and eviction, against real redis-server processes
 * configured each way an operator might leave them.
 */
import { Writable } from 'node:stream';
import { checkRedisDurability, createLogger, createRedis, redisReady } from '@pmm/core';
import { privateRedis, type PrivateRedis } from '@pmm/testkit';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

function capture() {
  const lines: { level: string; message: string }[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const line of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(line));
      done();
    },
  });
  return { lines, logger: createLogger({ service: 'test', stream, level: 'debug' }) };
}

const servers: PrivateRedis[] = [];
const dirs: string[] = [];
afterAll(async () => {
  await Promise.all(servers.map((s) => s.stop('SIGTERM')));
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** Runs the check against a fresh redis-server started with `args`; returns the log lines. */
async function checkWith(args: string[], role: 'records' | 'rebuildable' = 'records') {
  const dir = mkdtempSync(path.join(tmpdir(), 'redis-durability-'));
  dirs.push(dir);
  const server = await privateRedis({ dir, args });
  servers.push(server);
  const redis = createRedis(server.url, { name: 'durability-test' });
  try {
    await redisReady(redis);
    const { lines, logger } = capture();
    const warnings = await checkRedisDurability(redis, logger, role);
    await new Promise((r) => setImmediate(r));
    return { warnings, lines };
  } finally {
    redis.disconnect();
  }
}

describe('Redis durability check at start-up', () => {
  it('behavior: no AOF is a warning naming the loss', async () => {
    const { warnings, lines } = await checkWith(['--maxmemory-policy', 'noeviction']);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/no append-only file.*lost when Redis restarts/);
    expect(lines.filter((l) => l.level === 'warn').map((l) => l.message)).toEqual(warnings);
  });

  it('behavior: the rebuildable data’s server (REDIS_URL beside a REDIS_RECORDS_URL) is warned about what it holds, not the records', async () => {
    const { warnings } = await checkWith(['--maxmemory-policy', 'allkeys-lru'], 'rebuildable');
    expect(warnings).toEqual([
      expect.stringMatching(/rebuildable data.*no append-only file.*mid history/),
      expect.stringMatching(/rebuildable data.*maxmemory-policy allkeys-lru.*noeviction/),
    ]);
    for (const w of warnings) expect(w).not.toMatch(/integrators|API keys/);
  });

  it('behavior: allkeys-lru is a warning even with AOF on', async () => {
    const { warnings } = await checkWith(['--appendonly', 'yes', '--maxmemory-policy', 'allkeys-lru']);
    expect(warnings).toEqual([expect.stringMatching(/maxmemory-policy is allkeys-lru.*noeviction/)]);
  });

  it('default: AOF with noeviction (what docker-compose.yml runs) gives no warning', async () => {
    const { warnings, lines } = await checkWith([
      '--appendonly',
      'yes',
      '--appendfsync',
      'everysec',
      '--maxmemory-policy',
      'noeviction',
    ]);
    expect(warnings).toEqual([]);
    expect(lines).toEqual([]);
  });

  it('behavior: with CONFIG disabled (managed Redis; no service user may send it), INFO reveals the problems', async () => {
    const { warnings } = await checkWith(['--rename-command', 'CONFIG', '', '--maxmemory-policy', 'volatile-lru']);
    expect(warnings).toEqual([
      expect.stringMatching(/no append-only file/),
      expect.stringMatching(/maxmemory-policy is volatile-lru/),
    ]);
  });

  it('behavior: RDB snapshots without AOF still warn (keys since the last snapshot are lost)', async () => {
    const { warnings } = await checkWith(['--save', '60 1', '--maxmemory-policy', 'noeviction']);
    expect(warnings).toEqual([expect.stringMatching(/no append-only file.*since the last RDB snapshot/)]);
  });
});
