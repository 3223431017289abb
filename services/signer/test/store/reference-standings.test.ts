/**
 * The signer's view of each pair's standing against its reference (store/reference-standings.ts)
 * in a real Redis: a book's notice makes a new standing visible at once; a standing is relied on
 * only while fresh (its read recent, its key alive); a pair with a reference and no standing, or
 * a standing that does not parse, throws StandingUnknown (fail closed); a pair without one is not
 * read at all.
 */
import { randomBytes } from 'node:crypto';
import {
  bookBandKey,
  createRedis,
  encodeBandRecord,
  encodeChainUpdate,
  redisKeys,
  redisReady,
  type PairBandState,
  type RedisClient,
} from '@pmm/core';
import { until } from '@pmm/testkit';
import { ReferenceStandings, StandingUnknown } from '../../src';
import { REDIS_URL } from '../support/fixture';

const prefix = `pmm-test-${randomBytes(6).toString('hex')}`;
const keys = redisKeys(prefix);
const BASE = '0x' + 'Bb'.repeat(20);
const OTHER = '0x' + 'dd'.repeat(20);
const bandKey = bookBandKey(keys.book(8453));
let redis: RedisClient;
let subscriber: RedisClient;
let view: ReferenceStandings;
let now = 0;

const state = (withheld: boolean): PairBandState => ({
  status: withheld ? 'out_of_band' : 'in_band',
  mode: 'enforce',
  withheld,
  served: !withheld,
  streak: 0,
  since: 1,
  maxDeviationBelowBps: 50,
  maxDeviationAboveBps: 50,
});
const publish = async (block: number, withheld: boolean, ttlMs = 10_000) => {
  await redis.set(
    bandKey,
    encodeBandRecord({ block, time: 1, pairs: { [BASE.toLowerCase()]: state(withheld) } }),
    'PX',
    ttlMs,
  );
  await redis.publish(keys.updates(8453), encodeChainUpdate({ type: 'book', chainId: 8453, blockNumber: block }));
};

/** The standing, or undefined while it is unknown (polled). */
const seen = () => {
  try {
    return view.standing(8453, BASE);
  } catch {
    return undefined;
  }
};

beforeAll(async () => {
  redis = createRedis(REDIS_URL, { role: 'command', name: 'standings-test' });
  subscriber = createRedis(REDIS_URL, { role: 'subscriber', name: 'standings-test-sub' });
  await Promise.all([redisReady(redis), redisReady(subscriber)]);
  view = new ReferenceStandings({
    redis,
    subscriber,
    keys,
    chains: [8453],
    deployments: {
      8453: {
        chainId: 8453,
        contracts: { router: OTHER, helper: OTHER, verifier: OTHER },
        references: { [BASE]: { feed: OTHER, band: {} } },
      },
    },
    refreshMs: 60_000, // the notices alone, unless a test re-reads
    now: () => Date.now() + now,
  });
});

afterAll(async () => {
  await view.stop();
  await redis.del(bandKey);
  await Promise.allSettled([redis.quit(), subscriber.quit()]);
});

it('error: before any standing is written, a pair with a reference is unknown (fail closed); one without is not read', async () => {
  await view.start();
  expect(() => view.standing(8453, BASE)).toThrow(StandingUnknown);
  expect(view.standing(8453, OTHER)).toBeUndefined();
});

it("behavior: each book's notice makes its standing visible at once", async () => {
  await publish(10, false);
  await until(() => seen()?.withheld === false, 2_000, 'in band');
  await publish(11, true);
  await until(() => seen()?.withheld === true, 2_000, 'withheld');
});

it('error: a standing read more than 800 ms ago, or whose key expired, is not relied on', async () => {
  await publish(12, false);
  await until(() => seen()?.withheld === false, 2_000, 'in band');
  now = 900;
  expect(() => view.standing(8453, BASE)).toThrow(StandingUnknown);
  now = 0;
  await publish(13, false, 300);
  await until(() => seen()?.withheld === false, 2_000, 'in band');
  await new Promise((r) => setTimeout(r, 350));
  expect(() => view.standing(8453, BASE)).toThrow(StandingUnknown);
});

it('error: a standing that does not parse leaves the pair unknown once the last good one is old', async () => {
  await publish(14, false);
  await until(() => seen()?.withheld === false, 2_000, 'in band');
  await redis.set(bandKey, '{"block":"x"}');
  await redis.publish(keys.updates(8453), encodeChainUpdate({ type: 'book', chainId: 8453, blockNumber: 15 }));
  now = 900;
  expect(() => view.standing(8453, BASE)).toThrow(StandingUnknown);
  now = 0;
});
