/**
 * The book's compare-and-set in a real Redis: the book never moves backwards, the same block
 * (same hash) is not rewritten while another hash at the same height (a reorg) replaces it,
 * every write carries its expiry and is announced, and the liveness delete spares a newer book.
 * The pairs' transitions in and out of band go to their log only with a book written.
 */
import Redis from 'ioredis';
import { redisKeys } from '@pmm/core';
import { BAND_LOG_FIELD, bookBandKey, bookBandLogKey, bookBlockKey, bookHashKey } from '@pmm/core';
import { createBookStore } from '../../src/store/book-store';
import { REDIS_URL, deleteKeys, randomPrefix } from '../support/redis';
import { until } from '@pmm/testkit';

const prefix = randomPrefix();
const keys = redisKeys(prefix);
let redis: Redis;
let sub: Redis;
const messages: string[] = [];

beforeAll(async () => {
  redis = new Redis(REDIS_URL);
  sub = new Redis(REDIS_URL);
  await sub.subscribe(keys.updates(8453));
  sub.on('message', (_channel: string, message: string) => messages.push(message));
});

afterAll(async () => {
  await deleteKeys(redis, prefix);
  redis.disconnect();
  sub.disconnect();
});

const store = () =>
  createBookStore(redis, { keys: { book: keys.book(8453), updates: keys.updates(8453) }, chainId: 8453, ttlMs: 5_000 });

const HASH_A = '0x' + 'aa'.repeat(32);
const HASH_B = '0x' + 'bb'.repeat(32);

it('behavior: a book is written only if no higher block is stored; a new hash at the same height replaces it (INVARIANT: never backwards)', async () => {
  const books = store();
  expect(await books.storedBlock()).toBeNull();
  expect(await books.write(10, '{"blockNumber":10}', { hash: HASH_A })).toBe(true);
  expect(await books.write(9, '{"blockNumber":9}', { hash: HASH_B })).toBe(false);
  expect(await redis.get(keys.book(8453))).toBe('{"blockNumber":10}');
  // The same block again (another replica, a re-run job) is a duplicate.
  expect(await books.write(10, '{"blockNumber":10,"again":true}', { hash: HASH_A })).toBe(false);
  // The same height with another hash is a reorg: that block's book is replaced.
  expect(await books.write(10, '{"blockNumber":10,"reorg":true}', { hash: HASH_B })).toBe(true);
  expect(await books.storedBlock()).toEqual({ number: 10, hash: HASH_B, band: null });
  expect(await redis.get(keys.book(8453))).toBe('{"blockNumber":10,"reorg":true}');
  // The pairs' standing against their references goes with the book, and leaves with the next one that has none.
  expect(await books.write(11, '{"blockNumber":11}', { hash: HASH_A, band: '{"block":11}' })).toBe(true);
  expect(await books.storedBlock()).toEqual({ number: 11, hash: HASH_A, band: '{"block":11}' });
  expect(await redis.get(bookBlockKey(keys.book(8453)))).toBe('11');
  // The four keys carry the store's staleness TTL by default...
  const sideKeys = [bookBlockKey, bookHashKey, bookBandKey].map((side) => side(keys.book(8453)));
  for (const key of [keys.book(8453), ...sideKeys]) {
    const ttl = await redis.pttl(key);
    expect(ttl).toBeGreaterThan(4_000);
    expect(ttl).toBeLessThanOrEqual(5_000);
  }
  // ...or the writer's (bounded by the block's age).
  expect(await books.write(12, '{"blockNumber":12}', { hash: HASH_A, ttlMs: 1_500, band: '{"block":12}' })).toBe(true);
  for (const key of [keys.book(8453), ...sideKeys]) expect(await redis.pttl(key)).toBeLessThanOrEqual(1_500);
  expect(await books.write(13, '{"blockNumber":13}', { hash: HASH_A })).toBe(true);
  expect(await redis.exists(bookBandKey(keys.book(8453)))).toBe(0);
  await until(() => messages.length >= 5, 2_000, '5 announcements');
  expect(messages.map((m) => JSON.parse(m))).toEqual([
    { type: 'book', chainId: 8453, blockNumber: 10 },
    { type: 'book', chainId: 8453, blockNumber: 10 },
    { type: 'book', chainId: 8453, blockNumber: 11 },
    { type: 'book', chainId: 8453, blockNumber: 12 },
    { type: 'book', chainId: 8453, blockNumber: 13 },
  ]);
});

it('behavior: concurrent writers in any order leave the highest block', async () => {
  const books = store();
  const blocks = Array.from({ length: 40 }, (_, i) => 100 + ((i * 17) % 40));
  await Promise.all(blocks.map((n) => books.write(n, JSON.stringify({ blockNumber: n }))));
  expect(JSON.parse((await redis.get(keys.book(8453)))!)).toEqual({ blockNumber: 139 });
});

it('behavior: the liveness delete removes a book not above the last block seen, and spares a newer one', async () => {
  const books = store();
  await books.write(200, '{"blockNumber":200}', { band: '{"block":200}' });
  expect(await books.deleteIfNotAbove(199)).toBe(false);
  expect(await redis.exists(keys.book(8453))).toBe(1);
  expect(await books.deleteIfNotAbove(200)).toBe(true);
  const book = keys.book(8453);
  expect(await redis.exists(book, bookBlockKey(book), bookHashKey(book), bookBandKey(book))).toBe(0);
  // Once gone, a lower block (a restarted chain) is accepted again.
  expect(await books.write(3, '{"blockNumber":3}')).toBe(true);
});

it('behavior: the scripts survive a flushed script cache (EVALSHA falls back to EVAL)', async () => {
  const books = store();
  await redis.script('FLUSH');
  expect(await books.write(300, '{"blockNumber":300}')).toBe(true);
  await redis.script('FLUSH');
  expect(await books.deleteIfNotAbove(300)).toBe(true);
});

it('behavior: the transitions of a block go to the log with its book, once: a replica writing the same block adds none, and the log outlives the book', async () => {
  const chain = 4663;
  const books = createBookStore(redis, {
    keys: { book: keys.book(chain), updates: keys.updates(chain) },
    chainId: chain,
    ttlMs: 5_000,
  });
  const log = bookBandLogKey(keys.book(chain));
  const entries = async () => (await redis.xrange(log, '-', '+')).map(([, fields]) => fields);
  expect(await books.write(20, '{}', { hash: HASH_A, band: '{}', transitions: ['{"t":1}', '{"t":2}'] })).toBe(true);
  // The same block from another replica: not written, nothing added.
  expect(await books.write(20, '{}', { hash: HASH_A, band: '{}', transitions: ['{"t":1}', '{"t":2}'] })).toBe(false);
  // An older block: not written, nothing added.
  expect(await books.write(19, '{}', { hash: HASH_B, band: '{}', transitions: ['{"t":0}'] })).toBe(false);
  expect(await books.write(21, '{}', { hash: HASH_B, band: '{}' })).toBe(true);
  expect(await entries()).toEqual([
    [BAND_LOG_FIELD, '{"t":1}'],
    [BAND_LOG_FIELD, '{"t":2}'],
  ]);
  expect(await redis.pttl(log)).toBe(-1);
});
