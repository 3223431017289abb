/**
 * Liveness: the book disappears when the node is lost and comes back with it, and the
 * indexer rides out a Redis restart; in both cases without restarting the indexer.
 */
import Redis from 'ioredis';
import { redisKeys } from '@pmm/core';
import { startSystem, until, type System } from '@pmm/testkit';
import { startIndexer, type RunningIndexer } from '../src';
import { indexerConfig } from './support/indexer-env';
import { randomPrefix } from './support/redis';
import { readBook, waitForBook } from './support/stored-book';

jest.setTimeout(120_000);

const BOOK_TTL_MS = 4_000;
let sys: System;
let redis: Redis;
const running: RunningIndexer[] = [];

beforeAll(async () => {
  // The chain and the private Redis (the second test restarts its rebuildable server, sys.redis,
  // which holds all an indexer writes); the indexer runs in this process.
  sys = await startSystem({ chains: [4663], blockIntervalMs: 400, services: [] });
  // Rides out the Redis restart of the second test like the indexer.
  redis = new Redis(sys.redisUrl, { retryStrategy: () => 100 });
  redis.on('error', () => undefined);
});

afterAll(async () => {
  await Promise.all(running.map((r) => r.stop()));
  redis?.disconnect();
  await sys?.stop();
});

it('behavior: stopping the node removes the book within the staleness; restarting it brings the book back', async () => {
  const c = sys.chain(4663);
  const prefix = randomPrefix();
  const keys = redisKeys(prefix);
  const config = indexerConfig(c, prefix, { REDIS_URL: sys.redisUrl, BOOK_TTL_MS: String(BOOK_TTL_MS) });
  const ix = await startIndexer(config, { defaultMetrics: false });
  running.push(ix);
  const before = await waitForBook(redis, keys.book(4663));
  expect(before.pairs).toHaveLength(2);

  await sys.devnet.stopChain(4663);
  const stoppedAt = Date.now();
  await until(async () => (await redis.exists(keys.book(4663))) === 0, BOOK_TTL_MS + 3_000, 'the book to disappear');
  expect(Date.now() - stoppedAt).toBeLessThanOrEqual(BOOK_TTL_MS + 1_000);
  await until(
    async () => (await fetch(`http://127.0.0.1:${ix.served.port}/readyz`)).status === 503,
    5_000,
    'readyz to report the node down',
    50,
  );

  // Same port, redeployed (a fresh chain: block numbers start again from 0).
  await sys.devnet.startChain(4663);
  // The indexer reconnects as soon as the node listens, while the devnet is still deploying and
  // listing the pairs; interval mining can split that setup over two blocks, so the registry read
  // on reconnect may see only some of the pairs. The periodic refresh (REGISTRY_REFRESH_MS, 3 s
  // here) completes it: wait for the book with every pair, not for the first book.
  const pairsBefore = before.pairs.map((p) => p.baseToken);
  const after = await until(
    async () => {
      const book = await readBook(redis, keys.book(4663));
      return book?.pairs.map((p) => p.baseToken).join() === pairsBefore.join() && book;
    },
    30_000,
    'the book of the restarted chain with every pair',
    50,
  );
  // It keeps following the new chain.
  await waitForBook(redis, keys.book(4663), after.blockNumber + 3, 10_000);
  const metrics = await (await fetch(`http://127.0.0.1:${ix.served.port}/metrics`)).text();
  expect(metrics).toMatch(/indexer_node_reconnects_total(\{[^}]*\})? [1-9]/);
  expect(metrics).toMatch(/indexer_eth_calls_per_block_bucket\{le="1"[^}]*\} [1-9]/);
  await ix.stop();
  running.splice(running.indexOf(ix), 1);
});

it('behavior: a Redis restart under a running indexer is survived without intervention', async () => {
  const c = sys.chain(4663);
  const prefix = randomPrefix();
  const keys = redisKeys(prefix);
  const ix = await startIndexer(indexerConfig(c, prefix, { REDIS_URL: sys.redisUrl }), { defaultMetrics: false });
  running.push(ix);
  const first = await waitForBook(redis, keys.book(4663));

  // The system's Redis keeps nothing on disk: it comes back empty.
  await sys.redis!.stop('SIGKILL');
  await new Promise((r) => setTimeout(r, 1_500));
  await sys.redis!.start();

  // The new Redis is empty; the indexer fills it again on its own: book, then registry.
  const again = await waitForBook(redis, keys.book(4663), first.blockNumber + 1, 20_000);
  expect(again.pairs).toHaveLength(2);
  await until(async () => (await redis.get(keys.pairs(4663))) !== null, 10_000, 'the pair registry to be rewritten');
  // And keeps advancing.
  const later = await waitForBook(redis, keys.book(4663), again.blockNumber + 3, 10_000);
  expect((await readBook(redis, keys.book(4663)))!.blockNumber).toBeGreaterThanOrEqual(later.blockNumber);
});
