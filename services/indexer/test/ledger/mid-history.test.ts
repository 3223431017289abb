/**
 * The ledger's reading of the mid history in Redis (redisMidHistory) against the one definition of
 * the book a markout horizon reads, operator's recordAt over the same history sorted by block: the
 * last record at or before the target. Several blocks in one second (anvil, a chain with sub-second
 * blocks) share their time, and their block numbers may cross a power of ten within it.
 */
import { createRedis, redisKeys, redisReady, type RedisClient } from '@pmm/core';
import { recordAt, type MarkoutTarget } from '@pmm/operator';
import { privateRedis, type PrivateRedis } from '@pmm/testkit';
import { redisMidHistory } from '../../src/ledger/pending-markouts';
import { createMidStore } from '../../src/store/mid-store';

const keys = redisKeys('pmm');
const WETH = '0x' + '42'.repeat(20);
const QUOTE = '0x' + '11'.repeat(20);
let server: PrivateRedis;
let redis: RedisClient;

beforeAll(async () => {
  server = await privateRedis();
  redis = createRedis(server.url, { name: 'mid-history-test' });
  await redisReady(redis);
});

afterAll(async () => {
  redis?.disconnect();
  await server?.stop();
});

it('behavior: a time horizon reads the highest block of its second, by number, as recordAt does (blocks 998 to 1,003 in two seconds)', async () => {
  const store = createMidStore(redis, {
    keys: { mids: keys.mids(8453), midTimes: keys.midTimes(8453) },
    retentionSeconds: 86_400,
  });
  // 998, 999 and 1000 in second 5,000; 1001 to 1003 in 5,001. Each block's mid is its number.
  const time = (block: number) => (block <= 1000 ? 5_000 : 5_001);
  for (let block = 998; block <= 1003; block++)
    await store.record({ number: block, timestamp: time(block), hash: '0x' + '0'.repeat(64) }, [
      {
        baseToken: WETH,
        quoteToken: QUOTE,
        bids: [{ price: String(block - 1), amount: '1' }],
        asks: [{ price: String(block + 1), amount: '1' }],
      },
    ]);
  const history = redisMidHistory(redis, { mids: keys.mids(8453), midTimes: keys.midTimes(8453) });
  const sorted = (await redis.zrange(keys.mids(8453), 0, -1)).map((json) => JSON.parse(json));
  const targets: MarkoutTarget[] = [{ time: 5_000 }, { time: 5_001 }, { block: 999 }, { block: 1000 }];
  for (const target of targets)
    expect({ target, block: (await history.atOrBefore(target))?.block }).toEqual({
      target,
      block: recordAt(sorted, target)?.block,
    });
  expect((await history.atOrBefore({ time: 5_000 }))?.block).toBe(1000);
  expect(await history.atOrBefore({ time: 4_999 })).toBeUndefined();
});
