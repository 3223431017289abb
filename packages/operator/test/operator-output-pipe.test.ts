/**
 * An operator command's output through a pipe to a slow reader (`audit export | gzip`, a billing
 * job): the process must end only once every line is written. Before, it exited with most of
 * the export still in its stdout buffer, exit code 0, while its stderr summary counted them all.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DAY_MS, DurableWrites, createRedis, redisKeys, redisReady, type RedisClient } from '@pmm/core';
import { RedisAuditTrail } from '@pmm/signer';
import { sampleAuditRecord } from '@pmm/testkit';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const ROOT = path.resolve(__dirname, '../../..');
/** Well past a pipe's 64 KiB buffer: about 20 MB of JSON lines. */
const RECORDS = 25_000;

let redis: RedisClient;
const prefix = `pmm-pipe-${process.pid}-${Date.now()}`;

beforeAll(async () => {
  redis = createRedis(REDIS_URL, { name: 'pipe-test' });
  await redisReady(redis);
  const keys = redisKeys(prefix);
  const trail = new RedisAuditTrail({ keys, retentionMs: DAY_MS, durability: DurableWrites.unconfirmed(redis) });
  for (let i = 0; i < RECORDS; i += 1_000)
    await Promise.all(
      Array.from({ length: Math.min(1_000, RECORDS - i) }, (_, k) =>
        trail.record(sampleAuditRecord(i + k, { chainId: 8453 })),
      ),
    );
}, 60_000);

afterAll(async () => {
  const found = await redis.keys(`${prefix}:*`);
  if (found.length > 0) await redis.del(...found);
  redis.disconnect();
});

/**
 * Runs `sh -c "<cli> <args> | (sleep <s>; wc -l)"`: a reader that starts only after the writer
 * has filled the pipe. Resolves to the lines the reader got and the writer's exit code.
 */
async function throughSlowPipe(cli: string, args: string[]): Promise<{ lines: number; code: number }> {
  const dir = mkdtempSync(path.join(tmpdir(), 'pipe-'));
  try {
    const codeFile = path.join(dir, 'code');
    const quoted = [process.execPath, '-r', path.join(ROOT, 'scripts/lib/ts-register.cjs'), cli, ...args]
      .map((a) => `'${a}'`)
      .join(' ');
    const sh = spawn('sh', ['-c', `(${quoted}; echo $? > '${codeFile}') | (sleep 2; wc -l)`], {
      env: { ...process.env, REDIS_URL, REDIS_KEY_PREFIX: prefix, CHAINS: '', CONFIG_FILE: '' },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    sh.stdout.on('data', (d: Buffer) => (out += d.toString()));
    await new Promise((resolve) => sh.on('close', resolve));
    return { lines: Number(out.trim()), code: Number(readFileSync(codeFile, 'utf8').trim()) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

it('behavior: audit export through a slow pipe writes every record before it exits 0', async () => {
  const { lines, code } = await throughSlowPipe(path.join(ROOT, 'packages/operator/src/audit/audit.ts'), [
    'export',
    '--chain',
    '8453',
  ]);
  console.log(`audit export through a slow pipe: ${lines} lines of ${RECORDS} records, exit ${code}`);
  expect({ lines, code }).toEqual({ lines: RECORDS, code: 0 });
}, 60_000);
