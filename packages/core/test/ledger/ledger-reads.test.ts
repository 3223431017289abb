/**
 * core's LedgerReads over a real Redis: a period's swaps and reverted calls found by their block
 * times in sets scored by block number (a binary search over the ranks, then page after page),
 * exactly those of [from, to) in block order, however many pages they span and wherever the
 * period falls (before every record, after, between two, on blocks sharing a time); the cursor.
 */
import { randomUUID } from 'node:crypto';
import {
  LedgerReads,
  createRedis,
  ledgerCursorJson,
  ledgerEntryJson,
  ledgerRevertJson,
  redisKeys,
  redisReady,
  type RedisClient,
} from '@pmm/core';
import { sampleLedgerEntry, sampleLedgerRevert } from '@pmm/testkit';

const url = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const keys = redisKeys(`pmm-lr-${randomUUID().slice(0, 8)}`);
let redis: RedisClient;

/** Block n at time 1000 + 2·⌊n/3⌋ (three blocks share each time), two swaps each: 2,500 blocks, 5,000 swaps. */
const BLOCKS = 2_500;
const timeOf = (block: number) => 1_000 + 2 * Math.floor(block / 3);

beforeAll(async () => {
  redis = createRedis(url, { name: 'ledger-reads-test' });
  await redisReady(redis);
  const write = redis.pipeline();
  for (let block = 0; block < BLOCKS; block++) {
    for (const callIndex of [0, 1])
      write.zadd(keys.ledger(8453), block, ledgerEntryJson(sampleLedgerEntry(block, timeOf(block), { callIndex })));
    if (block % 10 === 0)
      write.zadd(keys.ledgerReverts(8453), block, ledgerRevertJson(sampleLedgerRevert(block, timeOf(block))));
  }
  write.set(keys.ledgerCursor(8453), ledgerCursorJson({ number: BLOCKS - 1, hash: '0xab', time: timeOf(BLOCKS - 1) }));
  await write.exec();
});

afterAll(async () => {
  await redis.del(keys.ledger(8453), keys.ledgerReverts(8453), keys.ledgerCursor(8453));
  redis.disconnect();
});

/** What the period must hold, computed from the blocks written. */
const expected = (from: number, to: number, every = 1, perBlock = 2) =>
  Array.from({ length: BLOCKS }, (_, b) => b)
    .filter((b) => b % every === 0 && timeOf(b) >= from && timeOf(b) < to)
    .flatMap((b) => Array(perBlock).fill(b) as number[]);

describe('LedgerReads', () => {
  const reads = () => new LedgerReads(redis, keys);

  it.each([
    ['a period inside, starting on a shared time', 1_100, 1_200],
    ['a period starting between two times', 1_101, 1_103],
    ['the whole ledger and more (five pages)', 0, 10_000],
    ['a period before every record', 0, 1_000],
    ['a period after every record', 5_000, 6_000],
    ['the last time alone', timeOf(BLOCKS - 1), timeOf(BLOCKS - 1) + 1],
  ])('behavior: %s: exactly its swaps, in block order', async (_what, from, to) => {
    const found = await reads().entries(8453, from, to);
    expect(found.map((e) => e.blockNumber)).toEqual(expected(from, to));
  });

  it('behavior: the reverted calls of a period, and the cursor; an empty chain has none', async () => {
    const found = await reads().reverts(8453, 1_300, 2_600);
    expect(found.map((r) => r.blockNumber)).toEqual(expected(1_300, 2_600, 10, 1));
    expect(found.length).toBeGreaterThan(0);
    expect(await reads().cursor(8453)).toEqual({ number: BLOCKS - 1, hash: '0xab', time: timeOf(BLOCKS - 1) });
    expect(await reads().entries(56, 0, 10_000)).toEqual([]);
    expect(await reads().cursor(56)).toBeUndefined();
  });
});
