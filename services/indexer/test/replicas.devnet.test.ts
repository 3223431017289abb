/**
 * HA: two replicas of one chain's indexer (processes as `npm start` runs them, from testkit's
 * startSystem) share the blocks through BullMQ: no block is computed twice, and SIGKILL of one
 * replica does not stop the book from advancing.
 */
import Redis from 'ioredis';
import { redisKeys } from '@pmm/core';
import { startSystem, stopProcess, until, type System } from '@pmm/testkit';
import { TEST_TIMINGS } from './support/indexer-env';
import { followIndexer, type IndexerProcess } from './support/indexer-process';
import { readBook, waitForBook } from './support/stored-book';

jest.setTimeout(120_000);

let sys: System;
let redis: Redis;
const keys = redisKeys();

beforeAll(async () => {
  sys = await startSystem({
    chains: [8453],
    blockIntervalMs: 400,
    services: ['indexer'],
    indexerReplicas: { 8453: 2 },
    // The test timings (a killed replica's job is taken over after 1.5 s), and every computed block logged.
    env: { indexer: { ...TEST_TIMINGS, LOG_LEVEL: 'debug' } },
  });
  redis = new Redis(sys.redisUrl);
});

afterAll(async () => {
  redis?.disconnect();
  await sys?.stop();
});

function duplicates(blocks: number[]): number[] {
  const seen = new Set<number>();
  return blocks.filter((b) => (seen.has(b) ? true : (seen.add(b), false)));
}

it('behavior: two replicas compute each block once; after SIGKILL of one, the book keeps advancing', async () => {
  const [a, b] = sys.processesOf('indexer').map(followIndexer) as [IndexerProcess, IndexerProcess];

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
