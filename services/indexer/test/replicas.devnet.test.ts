/**
 * HA: two replicas of one chain's indexer (child processes, as operators run them) share the
 * blocks through BullMQ: no block is computed twice, and SIGKILL of one replica does not stop
 * the book from advancing.
 */
import Redis from 'ioredis';
import { redisKeys } from '@pmm/core';
import { startDevnet, type Devnet } from '@pmm/devnet';
import { indexerEnv } from './support/indexer-env';
import { spawnIndexer, type IndexerProcess } from './support/indexer-process';
import { stopProcess, until } from '@pmm/testkit';
import { REDIS_URL, deleteKeys, randomPrefix } from './support/redis';
import { readBook, waitForBook } from './support/stored-book';

jest.setTimeout(120_000);

let devnet: Devnet;
let redis: Redis;
const prefix = randomPrefix();
const keys = redisKeys(prefix);
const replicas: IndexerProcess[] = [];

beforeAll(async () => {
  redis = new Redis(REDIS_URL);
  devnet = await startDevnet({ chains: [8453], blockIntervalMs: 400 });
});

afterAll(async () => {
  await Promise.all(replicas.map((r) => stopProcess(r.child, 'SIGKILL')));
  await devnet?.stop();
  if (redis) {
    await deleteKeys(redis, prefix);
    redis.disconnect();
  }
});

function duplicates(blocks: number[]): number[] {
  const seen = new Set<number>();
  return blocks.filter((b) => (seen.has(b) ? true : (seen.add(b), false)));
}

it('behavior: two replicas compute each block once; after SIGKILL of one, the book keeps advancing', async () => {
  const c = devnet.stack.chains['8453']!;
  const env = indexerEnv(c, prefix, { LOG_LEVEL: 'debug' });
  const a = spawnIndexer({ ...env, PORT: '0' });
  const b = spawnIndexer({ ...env, PORT: '0' });
  replicas.push(a, b);

  await waitForBook(redis, keys.book(8453), 0, 60_000);
  // Let both replicas run side by side until they have computed 15 blocks between them. Waited
  // for on the log lines themselves, not on the book: a replica logs a block after writing its
  // book and the line reaches us through a pipe later, and under load a replica skips a block
  // whose successor it has already seen (LIFO, see block-queue.ts), so a book 15 blocks further
  // on does not mean 15 lines have arrived.
  const together = await until(
    () => {
      const computed = [...a.computed(), ...b.computed()];
      return computed.length >= 15 && computed;
    },
    30_000,
    '15 blocks computed by the two replicas',
  );
  expect(duplicates(together)).toEqual([]);

  // Kill the replica that computed the newest block (the active worker), without warning.
  const newest = Math.max(...together);
  const victim = a.computed().includes(newest) ? a : b;
  const survivor = victim === a ? b : a;
  const atKill = (await readBook(redis, keys.book(8453)))!.blockNumber;
  const killedAt = Date.now();
  await stopProcess(victim.child, 'SIGKILL');

  // The survivor takes over within about a job lock (1.5 s) plus a block or two.
  const next = await waitForBook(redis, keys.book(8453), atKill + 1, 10_000);
  const takeoverMs = Date.now() - killedAt;
  expect(takeoverMs).toBeLessThan(4_000);
  // And keeps going: 10 more blocks.
  await waitForBook(redis, keys.book(8453), next.blockNumber + 10, 20_000);
  await until(() => survivor.computed().some((n) => n > atKill), 5_000, 'the survivor to compute');

  const all = [...victim.computed(), ...survivor.computed()];
  expect(duplicates(all)).toEqual([]);

  // A graceful stop of the survivor exits 0.
  survivor.child.kill('SIGTERM');
  expect(await survivor.exited).toEqual({ code: 0, signal: null });
  expect(survivor.lines.some((l) => l.message === 'indexer stopped')).toBe(true);
});
