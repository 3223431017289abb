/**
 * The Redis behind each `REDIS_DURABILITY` mode the gateway benchmark compares side by side
 * (gateway.bench.ts), and what one fsync costs on this machine's disk:
 *
 * - `fsync`: `npm run bench`'s own Redis, as `npm start` runs it (append-only file fsynced before
 *   each answer; the bench's main system);
 * - `none`: a Redis of its own that fsyncs its append-only file once a second (what ran before
 *   durable writes), the signer confirming nothing;
 * - `replica`: a primary and one replica of their own, both with the shipped replicated settings
 *   (deploy/redis/replicated.conf), the signer waiting (WAIT) for the replica's acknowledgement.
 */
import { closeSync, fdatasyncSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { closeRedis, createRedis, redisReady, type RedisClient } from '@pmm/core';
import { privateRedis, privateReplicatedRedis } from '@pmm/testkit';

export type ComparedMode = 'none' | 'replica';

export interface ModeRedis {
  mode: ComparedMode;
  /** What the signer connects to. */
  url: string;
  /** The signer's settings for the mode. */
  signerEnv: Record<string, string>;
  /** One line: the Redis and what the signer confirms. */
  describe: string;
  /** A connection to every node, whose CPU the mode's rows are charged (INFO cpu). */
  nodes: RedisClient[];
  stop(): Promise<void>;
}

async function connect(url: string): Promise<RedisClient> {
  const client = createRedis(url, { name: 'bench-mode' });
  await redisReady(client);
  return client;
}

export async function startModeRedis(mode: ComparedMode): Promise<ModeRedis> {
  if (mode === 'none') {
    const dir = mkdtempSync(path.join(tmpdir(), 'bench-redis-none-'));
    const redis = await privateRedis({
      dir,
      args: ['--appendonly', 'yes', '--appendfsync', 'everysec', '--maxmemory-policy', 'noeviction'],
    });
    const nodes = [await connect(redis.url)];
    return {
      mode,
      url: redis.url,
      signerEnv: { REDIS_DURABILITY: 'none' },
      describe: 'one node, appendfsync everysec; nothing confirmed',
      nodes,
      stop: async () => {
        await Promise.all(nodes.map((c) => closeRedis(c)));
        await redis.stop();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  }
  const replicated = await privateReplicatedRedis({ replicas: 1 });
  const nodes = await Promise.all([replicated.primary, ...replicated.replicas].map((n) => connect(n.url)));
  return {
    mode,
    url: replicated.url,
    signerEnv: { REDIS_DURABILITY: 'replica', REDIS_DURABLE_REPLICAS: '1' },
    describe: 'a primary and one replica, both appendfsync always (replicated.conf); WAIT 1',
    nodes,
    stop: async () => {
      await Promise.all(nodes.map((c) => closeRedis(c)));
      await replicated.stop();
    },
  };
}

/**
 * One fsync of this machine's temporary folder, where every bench Redis keeps its file: p50 and
 * p99 ms of appending 1 KiB (about one audit record's bytes in the append-only file) and
 * fdatasync, as Redis does before it answers with `appendfsync always`.
 */
export function fsyncLatencyMs(count = 200): { p50: number; p99: number } {
  const dir = mkdtempSync(path.join(tmpdir(), 'bench-fsync-'));
  const fd = openSync(path.join(dir, 'probe'), 'a');
  const chunk = Buffer.alloc(1024, 0x61);
  const times: number[] = [];
  try {
    for (let i = 0; i < count; i++) {
      const t = process.hrtime.bigint();
      writeSync(fd, chunk);
      fdatasyncSync(fd);
      times.push(Number(process.hrtime.bigint() - t) / 1e6);
    }
  } finally {
    closeSync(fd);
    rmSync(dir, { recursive: true, force: true });
  }
  times.sort((a, b) => a - b);
  return { p50: times[Math.floor(count / 2)]!, p99: times[Math.floor(count * 0.99)]! };
}
