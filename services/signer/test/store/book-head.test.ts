/**
 * How the signer reads a chain's book head for its firm quotes (store/book-head.ts), in a real
 * Redis: the quotes asked in one turn of the event loop share one read, and that read is sent
 * only once the turn is over, so none reads a head older than its own request.
 */
import { randomBytes } from 'node:crypto';
import { bookHashKey, createRedis, redisKeys, redisReady, type RedisClient } from '@pmm/core';
import { bookHeadReader } from '../../src';
import { REDIS_URL } from '../support/fixture';

const prefix = `pmm-test-${randomBytes(6).toString('hex')}`;
const keys = redisKeys(prefix);
const CHAIN = 8453;
let redis: RedisClient;
/** The reads sent (one MULTI each), counted through a client that counts them. */
let reads = 0;
let counted: RedisClient;

const hash = (n: number) => `0x${n.toString(16).padStart(64, '0')}`;
/** A head of block `n` as the indexer writes it (the body's first members, the hash beside it). */
const headOf = (n: number): [string, string, string, string] => [
  keys.book(CHAIN),
  JSON.stringify({ chainId: CHAIN, blockNumber: n, blockTime: 1_700_000_000 + n, pairs: [] }),
  bookHashKey(keys.book(CHAIN)),
  hash(n),
];

beforeAll(async () => {
  redis = createRedis(REDIS_URL, { name: 'book-head-test' });
  await redisReady(redis);
  counted = new Proxy(redis, {
    get(target, name, receiver) {
      if (name === 'multi') reads++;
      return Reflect.get(target, name, receiver) as unknown;
    },
  });
});

afterAll(async () => {
  const left = await redis.keys(`${prefix}:*`);
  if (left.length > 0) await redis.del(...left);
  redis.disconnect();
});

beforeEach(() => (reads = 0));

describe('book head reads', () => {
  it('behavior: the quotes of one turn share one read, sent after the turn: a head written meanwhile is what they all read', async () => {
    await redis.mset(...headOf(10));
    const read = bookHeadReader(counted, keys);
    const first = read(CHAIN);
    const second = read(CHAIN);
    // Written in the same turn, after both asked, on the same connection: before the read is sent.
    const written = redis.mset(...headOf(11));
    const heads = await Promise.all([first, second]);
    await written;
    expect(heads).toEqual([
      { number: 11, hash: hash(11), time: 1_700_000_011 },
      { number: 11, hash: hash(11), time: 1_700_000_011 },
    ]);
    expect(reads).toBe(1);
  });

  it('behavior: a quote of a later turn reads again, and sees what was written since', async () => {
    await redis.mset(...headOf(20));
    const read = bookHeadReader(counted, keys);
    expect((await read(CHAIN))?.number).toBe(20);
    await redis.mset(...headOf(21));
    expect((await read(CHAIN))?.number).toBe(21);
    expect(reads).toBe(2);
  });

  it('behavior: each chain has its own read', async () => {
    await redis.mset(...headOf(30));
    const read = bookHeadReader(counted, keys);
    const [ours, none] = await Promise.all([read(CHAIN), read(56)]);
    expect(ours?.number).toBe(30);
    expect(none).toBeNull();
    expect(reads).toBe(2);
  });
});
