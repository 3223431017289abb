/**
 * The mid history in a real Redis: each computed block's tops of book (and the pair's reference
 * when the block's standing has one), the same block replaced (a re-run job, a reorg's other
 * block), trimmed to the retention by block time.
 */
import Redis from 'ioredis';
import { parseMidRecord, redisKeys, referenceOf, type BandRecord, type PairBandState } from '@pmm/core';
import type { PairOrderbook } from '@pmm/protocol';
import { createMidStore } from '../../src/store/mid-store';
import { REDIS_URL, deleteKeys, randomPrefix } from '../support/redis';

const prefix = randomPrefix();
const keys = redisKeys(prefix);
let redis: Redis;
beforeAll(() => void (redis = new Redis(REDIS_URL)));
afterAll(async () => {
  await deleteKeys(redis, prefix);
  redis.disconnect();
});

const BASE = '0x' + 'Ab'.repeat(20);
const book = (bid: string, ask: string): PairOrderbook[] => [
  {
    baseToken: BASE,
    quoteToken: '0x' + '11'.repeat(20),
    bids: bid ? [{ price: bid, amount: '1' }] : [],
    asks: [{ price: ask, amount: '1' }],
  },
];
const stored = async () => (await redis.zrange(keys.mids(8453), 0, -1)).map((json) => parseMidRecord(json));

it("behavior: one record per block with each pair's best bid and ask; the same block again replaces it; older than the retention is trimmed", async () => {
  const mids = createMidStore(redis, {
    keys: { mids: keys.mids(8453), midTimes: keys.midTimes(8453) },
    retentionSeconds: 100,
  });
  const hash = (n: number) => '0x' + n.toString(16).padStart(64, '0');
  await mids.record({ number: 1, timestamp: 1000, hash: hash(1) }, book('2999', '3001'));
  await mids.record({ number: 2, timestamp: 1050, hash: hash(2) }, book('', '3002'));
  // A reorg's other block 2: replaced, not added.
  await mids.record({ number: 2, timestamp: 1050, hash: hash(22) }, book('2998', '3002'));
  expect(await stored()).toEqual([
    { block: 1, time: 1000, hash: hash(1), pairs: { [BASE.toLowerCase()]: { bid: '2999', ask: '3001' } } },
    { block: 2, time: 1050, hash: hash(22), pairs: { [BASE.toLowerCase()]: { bid: '2998', ask: '3002' } } },
  ]);
  // Block 3 at 1120: block 1 (1000 < 1120 - 100) goes, block 2 stays.
  await mids.record({ number: 3, timestamp: 1120, hash: hash(3) }, book('3000', '3004'));
  expect((await stored()).map((r) => r.block)).toEqual([2, 3]);
  expect(await redis.zrange(keys.midTimes(8453), 0, -1)).toEqual(['2', '3']);
});

it("behavior: a pair's reference at the block is kept beside its tops when the standing believed its feed; none without", async () => {
  const mids = createMidStore(redis, {
    keys: { mids: keys.mids(56), midTimes: keys.midTimes(56) },
    retentionSeconds: 100,
  });
  const hash = '0x' + '7'.repeat(64);
  const state = (referencePrice?: number): PairBandState => ({
    status: referencePrice ? 'in_band' : 'unreadable',
    mode: 'enforce',
    withheld: !referencePrice,
    served: !!referencePrice,
    streak: 0,
    since: 1,
    maxDeviationBelowBps: 50,
    maxDeviationAboveBps: 50,
    ...(referencePrice ? { referencePrice } : {}),
  });
  const band = (s: PairBandState): BandRecord => ({ block: 5, time: 1000, pairs: { [BASE.toLowerCase()]: s } });
  await mids.record({ number: 5, timestamp: 1000, hash }, book('2999', '3001'), band(state(3012.5)));
  await mids.record({ number: 6, timestamp: 1001, hash }, book('2999', '3001'), band(state()));
  await mids.record({ number: 7, timestamp: 1002, hash }, book('2999', '3001'));
  const [five, six, seven] = (await redis.zrange(keys.mids(56), 0, -1)).map((json) => parseMidRecord(json));
  expect(five!.pairs[BASE.toLowerCase()]).toEqual({ bid: '2999', ask: '3001', ref: '3012.5' });
  expect(referenceOf(five!, BASE)).toBe(3012.5);
  for (const r of [six!, seven!]) {
    expect(r.pairs[BASE.toLowerCase()]).toEqual({ bid: '2999', ask: '3001' });
    expect(referenceOf(r, BASE)).toBeUndefined();
  }
});
