/**
 * Indexer presence on a real Redis: announcements are read back per chain, expire with their
 * TTL (a replica that died), leave the chain's index, and are withdrawn on a clean stop.
 */
import { randomUUID } from 'node:crypto';
import {
  announcePresence,
  createRedis,
  parseIndexerPresence,
  readPresence,
  redisKeys,
  redisReady,
  withdrawPresence,
  type IndexerPresence,
  type RedisClient,
} from '@pmm/core';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const keys = redisKeys(`presence-${randomUUID().slice(0, 8)}`);
let redis: RedisClient;

beforeAll(async () => {
  redis = createRedis(REDIS_URL, { name: 'test' });
  await redisReady(redis);
});

afterAll(() => redis.disconnect());

const presence = (replica: string, over: Partial<IndexerPresence> = {}): IndexerPresence => ({
  chainId: 8453,
  replica,
  nodeUp: true,
  headBlock: 42,
  transport: 'websocket',
  at: Date.now(),
  ...over,
});

describe('indexer presence', () => {
  it('behavior: each replica is read back under its chain; a dead one expires and leaves the index', async () => {
    await announcePresence(redis, keys, presence('a:1'));
    await announcePresence(redis, keys, presence('b:2', { nodeUp: false, headBlock: null }), 300);
    await announcePresence(redis, keys, presence('c:3', { chainId: 56 }));
    expect((await readPresence(redis, keys, 8453)).map((p) => [p.replica, p.nodeUp, p.headBlock])).toEqual([
      ['a:1', true, 42],
      ['b:2', false, null],
    ]);
    expect((await readPresence(redis, keys, 56)).map((p) => p.replica)).toEqual(['c:3']);
    // Same hash tag: one slot per chain (a Cluster can MULTI and MGET them).
    expect(keys.indexerPresence(8453, 'a:1')).toMatch(/\{8453\}/);
    expect(keys.indexerPresenceIndex(8453)).toMatch(/\{8453\}/);

    await new Promise((r) => setTimeout(r, 400));
    expect((await readPresence(redis, keys, 8453)).map((p) => p.replica)).toEqual(['a:1']);
    await announcePresence(redis, keys, presence('a:1'));
    expect(await redis.zrange(keys.indexerPresenceIndex(8453), 0, -1)).toEqual(['a:1']);

    await withdrawPresence(redis, keys, 8453, 'a:1');
    expect(await readPresence(redis, keys, 8453)).toEqual([]);
    await withdrawPresence(redis, keys, 56, 'c:3');
  });

  it('behavior: a malformed record is skipped, never thrown on', () => {
    expect(parseIndexerPresence('not json')).toBeUndefined();
    expect(parseIndexerPresence(JSON.stringify({ ...presence('x'), nodeUp: 'yes' }))).toBeUndefined();
    expect(parseIndexerPresence(JSON.stringify({ ...presence('x'), transport: 'wss://user:pw@node' }))).toBeUndefined();
    expect(parseIndexerPresence(JSON.stringify(presence('x')))).toEqual(presence('x', { at: expect.any(Number) }));
  });
});
