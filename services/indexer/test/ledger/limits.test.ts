/**
 * The ledger's limits in-process (limits.ts) on a private Redis: a markout at a time horizon read
 * from the mid history as the indexer writes it (mid-store.ts) trips the markout floor and writes
 * the halt with its trip; a trip whose write cannot be confirmed durable (a Redis without an
 * append-only file, under REDIS_DURABILITY=fsync) is counted, written nowhere, and tried again at
 * the next block without a new swap; the revert share's probation after the resume of its trip,
 * read from the halts' log (by a ledger started again too).
 */
import {
  DurableWrites,
  HaltStore,
  createLogger,
  createRedis,
  redisKeys,
  redisReady,
  type LedgerEntry,
  type RedisClient,
} from '@pmm/core';
import { privateRedis, privateReplicatedRedis, sampleLedgerRevert, until, type PrivateRedis } from '@pmm/testkit';
import { createLedgerMetrics, type LedgerMetrics } from '../../src/ledger/ledger-metrics';
import type { LimitConfig } from '../../src/ledger/limit-settings';
import type { DeadlineFate } from '../../src/ledger/deadline-fates';
import { startLimits } from '../../src/ledger/limits';
import { redisMidHistory } from '../../src/ledger/pending-markouts';
import { createMidStore } from '../../src/store/mid-store';

const keys = redisKeys('pmm');
const WETH = '0x' + '42'.repeat(20);
const QUOTE = '0x' + '11'.repeat(20);
const logger = createLogger({ service: 'limits-test', silent: true });
let server: PrivateRedis;
let redis: RedisClient;

beforeAll(async () => {
  server = await privateRedis();
  redis = createRedis(server.url, { name: 'limits-test' });
  await redisReady(redis);
});

afterAll(async () => {
  redis?.disconnect();
  await server?.stop();
});

beforeEach(async () => {
  await redis.flushall();
});

let transactions = 0;
function swap(integratorId: string, blockNumber: number, quoteAmount = '1000'): LedgerEntry {
  transactions++;
  return {
    chainId: 8453,
    blockNumber,
    blockHash: '0x' + blockNumber.toString(16).padStart(64, '0'),
    blockTime: 1_000 + blockNumber,
    txHash: '0x' + transactions.toString(16).padStart(64, '0'),
    callIndex: 0,
    via: 'direct',
    integratorId,
    keyId: 'k',
    requestId: 'r',
    base: WETH,
    quote: QUOTE,
    pair: 'WETH/USDC',
    side: 'ask',
    baseAmount: '0.333333333333333333',
    quoteAmount,
    executionPrice: '3000',
    amountOut: '333333333333333333',
  };
}

/** The limits on this Redis, their halts unconfirmed, the clock at `nowMs`. */
const limitsOn = (config: LimitConfig, metrics: LedgerMetrics, nowMs: number) =>
  startLimits({
    chainId: 8453,
    config,
    redis,
    keys,
    durability: DurableWrites.unconfirmed(redis),
    history: redisMidHistory(redis, { mids: keys.mids(8453), midTimes: keys.midTimes(8453) }),
    metrics,
    logger,
    now: () => nowMs,
  });

const counter = async (metrics: LedgerMetrics, name: 'limitTrips' | 'limitTripFailures') =>
  (await metrics[name].get()).values.reduce((total, v) => total + v.value, 0);

it('behavior: markouts at a time horizon, read from the mid history, trip the floor: the halt carries the trip', async () => {
  // The indexer's record of blocks 1..30 (time 1000 + block): the mid is 3000 up to block 12,
  // then 3030 (the market rose 1 % after the swaps of blocks 10 and 11), 3060 from block 25 (past
  // the 12 s horizon: a markout that read the newest book would show −200 bps).
  const mids = createMidStore(redis, {
    keys: { mids: keys.mids(8453), midTimes: keys.midTimes(8453) },
    retentionSeconds: 86_400,
  });
  for (let block = 1; block <= 30; block++) {
    const [bid, ask] = block <= 12 ? ['2999', '3001'] : block <= 24 ? ['3029', '3031'] : ['3059', '3061'];
    await mids.record({ number: block, timestamp: 1_000 + block, hash: '0x' + '0'.repeat(64) }, [
      { baseToken: WETH, quoteToken: QUOTE, bids: [{ price: bid, amount: '1' }], asks: [{ price: ask, amount: '1' }] },
    ]);
  }
  const metrics = createLedgerMetrics({ chainId: 8453, defaultMetrics: false });
  // The window loaded at the first evaluation ends at the swaps' time.
  const limits = limitsOn(
    { windowSeconds: 3_600, markout: { floorBps: -20, horizon: '12s', minSwaps: 2 } },
    metrics,
    1_031_000,
  );
  limits.onCommit(10, [swap('informed', 10)], 1_010);
  limits.onCommit(11, [swap('informed', 11)], 1_011);
  limits.onCommit(31, [], 1_031);
  await limits.idle();
  const [halt] = await new HaltStore(redis, keys).active();
  // The maker sold at 3000; 12 s later (blocks 22, 23) the mid was 3030: −100 bps each.
  expect(halt).toMatchObject({
    scope: { integratorId: 'informed' },
    by: 'ledger-8453',
    trip: { limit: 'integrator-markout', value: '-100.00', threshold: '-20' },
  });
  expect(await counter(metrics, 'limitTrips')).toBe(1);
  expect((await metrics.limitsBlock.get()).values[0]!.value).toBe(31);
});

it('error: a trip that cannot be confirmed durable is counted, writes no halt, and is tried again at the next block', async () => {
  const metrics = createLedgerMetrics({ chainId: 8453, defaultMetrics: false });
  const limits = startLimits({
    chainId: 8453,
    config: { windowSeconds: 3_600, integratorNotional: '1500' },
    redis,
    keys,
    // This Redis keeps no append-only file: fsync mode refuses to vouch for any write.
    durability: new DurableWrites(redis, { mode: 'fsync', replicas: 1, waitTimeoutMs: 100 }),
    history: redisMidHistory(redis, { mids: keys.mids(8453), midTimes: keys.midTimes(8453) }),
    metrics,
    logger,
    now: () => 1_002_000,
  });
  limits.onCommit(1, [swap('whale', 1), swap('whale', 1, '600')], 1_001);
  await limits.idle();
  expect(await counter(metrics, 'limitTripFailures')).toBe(1);
  // A block without a swap of the whale: the broken limit is tried again.
  limits.onCommit(2, [], 1_002);
  await until(async () => (await counter(metrics, 'limitTripFailures')) === 2, 5_000);
  expect(await new HaltStore(redis, keys).active()).toEqual([]);
  expect(await counter(metrics, 'limitTrips')).toBe(0);
});

it('behavior: in replica mode a trip counts only once its halt is on the replica: written on the connection the WAIT confirms, not the ledger own', async () => {
  const nodes = await privateReplicatedRedis({ replicas: 1, args: ['--min-replicas-max-lag', '120'] });
  const ledgerRedis = createRedis(nodes.url, { name: 'limits-ledger' });
  const lane = createRedis(nodes.url, { name: 'limits-halts' });
  try {
    await Promise.all([redisReady(ledgerRedis), redisReady(lane)]);
    const metrics = createLedgerMetrics({ chainId: 8453, defaultMetrics: false });
    const limits = startLimits({
      chainId: 8453,
      config: { windowSeconds: 3_600, integratorNotional: '1500' },
      redis: ledgerRedis,
      keys,
      // As the ledger runs it: its halts on a connection of their own.
      durability: new DurableWrites(lane, { mode: 'replica', replicas: 1, waitTimeoutMs: 300 }),
      history: redisMidHistory(ledgerRedis, { mids: keys.mids(8453), midTimes: keys.midTimes(8453) }),
      metrics,
      logger,
      now: () => 1_002_000,
    });
    // The replica stopped: no halt can be confirmed (a WAIT on a connection that wrote nothing
    // would have answered at once).
    nodes.replicas[0]!.pause();
    limits.onCommit(1, [swap('whale', 1), swap('whale', 1, '600')], 1_001);
    await limits.idle();
    expect([await counter(metrics, 'limitTrips'), await counter(metrics, 'limitTripFailures')]).toEqual([0, 1]);
    nodes.replicas[0]!.resume();
    // Back: the halt written meanwhile is on the replica; the limit sees its scope halted.
    const replica = createRedis(nodes.replicas[0]!.url, { name: 'limits-replica' });
    try {
      await redisReady(replica);
      await until(
        async () => (await replica.hlen(keys.haltTrips(8453))) === 1,
        10_000,
        "the ledger's trip on the replica",
      );
    } finally {
      replica.disconnect();
    }
    await limits.idle();
  } finally {
    ledgerRedis.disconnect();
    lane.disconnect();
    await nodes.stop();
  }
}, 60_000);

it("behavior: the revert share trips; after the operator's resume the ledger reads from the log that the trip was this limit's, and a ledger started again too: the re-arm level for a window", async () => {
  const metrics = createLedgerMetrics({ chainId: 8453, defaultMetrics: false });
  const start = (now: number) =>
    limitsOn({ windowSeconds: 600, reverts: { shareBps: 2000, rearmBps: 1000, minCalls: 5 } }, metrics, now);
  const reverted = (block: number, n: number) =>
    Array.from({ length: n }, (_, i) =>
      sampleLedgerRevert(block, 1_000 + block, { integratorId: 'acme', callIndex: i, txHash: `0x${block}${i}` }),
    );
  const store = new HaltStore(redis, keys);
  const limits = start(1_002_000);
  // 2 of 5 calls reverted: 4000 bps, above the trip level.
  limits.onCommit(1, [swap('acme', 1), swap('acme', 1), swap('acme', 1)], 1_001, reverted(1, 2));
  await limits.idle();
  expect((await store.active())[0]).toMatchObject({
    scope: { integratorId: 'acme' },
    trip: { limit: 'integrator-reverts', value: '4000', threshold: '2000' },
  });
  await store.resume({ integratorId: 'acme' }, { reason: 'fixed', by: 'alice', at: 1_010_000 });
  // After the resume: 1 of 8 calls, 1250 bps: under the trip level, above the re-arm level.
  const after = [20, 21, 22, 23, 24, 25, 26].map((block) => swap('acme', block));
  limits.onCommit(26, after, 1_026, reverted(26, 1));
  await limits.idle();
  const [again] = await store.active();
  expect(again).toMatchObject({ trip: { limit: 'integrator-reverts', value: '1250', threshold: '1000' } });
  expect(again!.reason).toContain('on probation after its last trip');

  // A ledger started again after a second resume reads the probation from the log.
  await store.resume({ integratorId: 'acme' }, { reason: 'fixed again', by: 'alice', at: 1_030_000 });
  const restarted = start(1_040_000);
  restarted.onCommit(
    40,
    [1, 2, 3, 4, 5, 6, 7].map(() => swap('acme', 40)),
    1_040,
    reverted(40, 1),
  );
  await restarted.idle();
  expect((await store.active())[0]).toMatchObject({ trip: { limit: 'integrator-reverts', value: '1250' } });
});

it('behavior: the unused share: the firm signatures the ledger judged at each block trip the limit; indicative ones do not count', async () => {
  const metrics = createLedgerMetrics({ chainId: 8453, defaultMetrics: false });
  const limits = limitsOn(
    { windowSeconds: 3_600, unused: { shareBps: 5000, rearmBps: 2500, minFirm: 3 } },
    metrics,
    Date.now(),
  );
  let n = 0;
  const judged = (block: number, fate: DeadlineFate['fate'], firm = true): DeadlineFate => ({
    integratorId: 'taker',
    requestId: `req-${++n}`,
    firm,
    fate,
    blockNumber: block,
    blockTime: 1_000 + block,
    deadline: 1_000 + block - 1,
  });
  // Two firm judged (one unused) and two indicative unused: under the minimum of three firm.
  limits.onCommit(1, [], 1_001, [], [judged(1, 'executed'), judged(1, 'unused'), judged(1, 'unused', false)]);
  limits.onCommit(2, [], 1_002, [], [judged(2, 'unused', false)]);
  await limits.idle();
  expect(await new HaltStore(redis, keys).active()).toEqual([]);
  limits.onCommit(3, [], 1_003, [], [judged(3, 'unused')]);
  await limits.idle();
  expect((await new HaltStore(redis, keys).active())[0]).toMatchObject({
    scope: { integratorId: 'taker' },
    trip: { limit: 'integrator-unused', value: '6666.67', threshold: '5000' },
  });
});
