/**
 * The ledger's store and its rolling markouts in a real Redis: each committed block's swaps are
 * added to their UTC day's totals per integrator in the same transaction, a block committed again
 * replaces its swaps in the totals too, a reorg's rollback takes its orphans out; the rolling
 * 60 s markout per integrator is kept in Redis and a restarted ledger goes on from it. A block's
 * reverted router calls are committed, replaced and rolled back with its swaps.
 */
import Redis from 'ioredis';
import {
  LEDGER_DAY_TTL_SECONDS,
  LEDGER_ROLLING_SWAPS,
  createLogger,
  ledgerDay,
  parseLedgerDay,
  parseRollingMarkout,
  parseLedgerRevert,
  redisKeys,
  type LedgerDayFate,
  type LedgerEntry,
} from '@pmm/core';
import { createLedgerMetrics } from '../../src/ledger/ledger-metrics';
import { createLedgerStore, ledgerStoreKeys } from '../../src/ledger/ledger-store';
import { RollingMarkouts } from '../../src/ledger/rolling-markouts';
import { sampleLedgerRevert } from '@pmm/testkit';
import { REDIS_URL, deleteKeys, randomPrefix } from '../support/redis';

const prefix = randomPrefix();
const keys = redisKeys(prefix);
const CHAIN = 8453;
let redis: Redis;
beforeAll(() => void (redis = new Redis(REDIS_URL)));
afterAll(async () => {
  await deleteKeys(redis, prefix);
  redis.disconnect();
});

const storeKeys = ledgerStoreKeys(keys, CHAIN);
const hash = (n: number) => `0x${n.toString(16).padStart(64, '0')}`;
/** Blocks 10 s apart around midnight UTC: 1 and 2 fall on 2026-11-05, 3 on the 6th. */
const MIDNIGHT = Date.UTC(2026, 10, 6) / 1000;
const timeOf = (block: number) => MIDNIGHT - 25 + block * 10;

let tx = 0;
function entry(block: number, integratorId: string, quoteAmount: string): LedgerEntry {
  tx++;
  return {
    chainId: CHAIN,
    blockNumber: block,
    blockHash: hash(block),
    blockTime: timeOf(block),
    txHash: hash(1_000 + tx),
    callIndex: 0,
    via: 'direct',
    integratorId,
    keyId: integratorId ? `pmm_${integratorId}` : '',
    requestId: integratorId ? `req-${tx}` : '',
    ...(integratorId ? {} : { reason: 'no audit record of its signature' }),
    base: '0x4200000000000000000000000000000000000006',
    quote: '0x833589fcd6edb6e08f4c7c32d4f71b54bda02913',
    pair: 'WETH/USDC',
    side: 'ask',
    baseAmount: '0.1',
    quoteAmount,
    executionPrice: '3000',
    amountOut: '100000000000000000',
  };
}

const reverted = (block: number, reason: string) => {
  tx++;
  return sampleLedgerRevert(block, timeOf(block), { chainId: CHAIN, txHash: hash(1_000 + tx), reason });
};
const revertsHeld = async () =>
  (await redis.zrange(keys.ledgerReverts(CHAIN), 0, -1)).map((j) => [
    parseLedgerRevert(j).blockNumber,
    parseLedgerRevert(j).reason,
  ]);

const totals = async (blockTime: number) =>
  parseLedgerDay(await redis.hgetall(keys.ledgerDay(CHAIN, ledgerDay(blockTime)))).sort((a, b) =>
    a.integratorId < b.integratorId ? -1 : 1,
  );

/** Signatures judged at a block (deadline-fates.ts), as the day totals take them. */
const judged = (block: number, integratorId: string, fate: LedgerDayFate['fate'], firm = true): LedgerDayFate => ({
  integratorId,
  firm,
  fate,
  blockTime: timeOf(block),
});
/** No firm signature judged. */
const NO_FIRM = { firm: 0, firmExecuted: 0, firmUnused: 0 };

describe("the ledger's day totals", () => {
  it('behavior: each committed block adds its swaps, reverted calls and firm signatures judged to its UTC day, per integrator; a day is kept a week', async () => {
    const store = createLedgerStore(redis, storeKeys, 256);
    await store.commit(
      { number: 1, hash: hash(1), time: timeOf(1) },
      [entry(1, 'acme', '300'), entry(1, 'acme', '150.5'), entry(1, '', '10')],
      [],
    );
    await store.commit(
      { number: 2, hash: hash(2), time: timeOf(2) },
      [entry(2, 'beta', '99.25')],
      [reverted(2, 'QuoteExpired')],
      // Indicative signatures are judged but not counted in the day.
      [judged(2, 'acme', 'executed'), judged(2, 'acme', 'unused'), judged(2, 'beta', 'executed', false)],
    );
    await store.commit(
      { number: 3, hash: hash(3), time: timeOf(3) },
      [entry(3, 'acme', '1000')],
      [reverted(3, 'WrongSender')],
      [judged(3, 'acme', 'reverted')],
    );
    expect(ledgerDay(timeOf(2))).toBe(ledgerDay(timeOf(1)));
    expect(ledgerDay(timeOf(3))).toBe(ledgerDay(timeOf(1)) + 1);
    expect(await totals(timeOf(1))).toEqual([
      { integratorId: '', swaps: 1, notional: 10, reverts: 0, ...NO_FIRM },
      // Its reverted call of block 2 (QuoteExpired) counts beside its swaps, and its two firm signatures judged.
      { integratorId: 'acme', swaps: 2, notional: 450.5, reverts: 1, firm: 2, firmExecuted: 1, firmUnused: 1 },
      { integratorId: 'beta', swaps: 1, notional: 99.25, reverts: 0, ...NO_FIRM },
    ]);
    expect(await totals(timeOf(3))).toEqual([
      { integratorId: 'acme', swaps: 1, notional: 1000, reverts: 1, firm: 1, firmExecuted: 0, firmUnused: 0 },
    ]);
    const ttl = await redis.ttl(keys.ledgerDay(CHAIN, ledgerDay(timeOf(1))));
    expect(ttl).toBeGreaterThan(LEDGER_DAY_TTL_SECONDS - 60);
    expect(ttl).toBeLessThanOrEqual(LEDGER_DAY_TTL_SECONDS);
    // The totals add up to what the ledger holds.
    expect(await redis.zcard(keys.ledger(CHAIN))).toBe(5);
    expect(await revertsHeld()).toEqual([
      [2, 'QuoteExpired'],
      [3, 'WrongSender'],
    ]);
  });

  it('behavior: a block committed again replaces its swaps in the totals, not adds to them', async () => {
    const store = createLedgerStore(redis, storeKeys, 256);
    await store.commit(
      { number: 3, hash: hash(3), time: timeOf(3) },
      [entry(3, 'acme', '400'), entry(3, 'gamma', '5')],
      [reverted(3, 'InvalidSignature')],
    );
    expect(await revertsHeld()).toEqual([
      [2, 'QuoteExpired'],
      [3, 'InvalidSignature'],
    ]);
    expect(await totals(timeOf(3))).toEqual([
      // The judgements of block 3 stay: the ledger judges a block once (a reorg takes them out, below).
      { integratorId: 'acme', swaps: 1, notional: 400, reverts: 1, firm: 1, firmExecuted: 0, firmUnused: 0 },
      { integratorId: 'gamma', swaps: 1, notional: 5, reverts: 0, ...NO_FIRM },
    ]);
  });

  it("behavior: a reorg's rollback takes the orphans and the judgements made in them out of their days' totals; an integrator left with none is not listed", async () => {
    const store = createLedgerStore(redis, storeKeys, 256);
    const undone = [judged(2, 'acme', 'executed'), judged(2, 'acme', 'unused'), judged(3, 'acme', 'reverted')];
    expect(await store.rollback({ number: 1, hash: hash(1) }, undone)).toEqual({ swaps: 3, reverts: 2 });
    expect(await revertsHeld()).toEqual([]);
    expect(await totals(timeOf(1))).toEqual([
      { integratorId: '', swaps: 1, notional: 10, reverts: 0, ...NO_FIRM },
      { integratorId: 'acme', swaps: 2, notional: 450.5, reverts: 0, ...NO_FIRM },
    ]);
    expect(await totals(timeOf(3))).toEqual([]);
    // The new branch's blocks count as any other.
    await store.commit({ number: 2, hash: hash(22), time: timeOf(2) }, [entry(2, 'beta', '1.75')], []);
    expect((await totals(timeOf(2))).find((t) => t.integratorId === 'beta')).toEqual({
      integratorId: 'beta',
      swaps: 1,
      notional: 1.75,
      reverts: 0,
      ...NO_FIRM,
    });
    expect(await store.cursor()).toEqual({ number: 2, hash: hash(22), time: timeOf(2) });
  });
});

describe('the rolling 60 s markout', () => {
  const logger = createLogger({ service: 'test', silent: true });
  const gauge = async (metrics: ReturnType<typeof createLedgerMetrics>, name: string, integrator: string) =>
    (await metrics.metrics.registry.getSingleMetric(name)!.get()).values.find((v) => v.labels.integrator === integrator)
      ?.value;

  it('behavior: the mean of the last 100 markouts per integrator, as metrics and in Redis; a restart goes on from them', async () => {
    const key = keys.ledgerMarkouts(CHAIN);
    const metrics = createLedgerMetrics({ chainId: CHAIN, defaultMetrics: false });
    const first = new RollingMarkouts(redis, key, metrics, logger);
    await first.load();
    first.track('acme');
    expect(await gauge(metrics, 'ledger_markout_60s_bps', 'acme')).toBeNaN();
    expect(await gauge(metrics, 'ledger_markout_60s_swaps', 'acme')).toBe(0);
    // 110 markouts: -1 … -110 bps; the last 100 are -11 … -110, mean -60.5.
    const values = Array.from({ length: 110 }, (_, i) => ({ integratorId: 'acme', bps: -(i + 1) }));
    await first.add(values.slice(0, 60));
    await first.add([...values.slice(60), { integratorId: 'beta', bps: 2.5 }]);
    expect(await gauge(metrics, 'ledger_markout_60s_bps', 'acme')).toBe(-60.5);
    expect(await gauge(metrics, 'ledger_markout_60s_swaps', 'acme')).toBe(LEDGER_ROLLING_SWAPS);
    const stored = parseRollingMarkout((await redis.hget(key, 'acme'))!).bps;
    expect(stored).toHaveLength(LEDGER_ROLLING_SWAPS);
    expect(stored[0]).toBe(-11);

    // A restarted ledger: one markout recorded before the stored ones are read comes after them.
    const again = createLedgerMetrics({ chainId: CHAIN, defaultMetrics: false });
    await redis.hset(key, 'broken', 'not json');
    const second = new RollingMarkouts(redis, key, again, logger);
    const loading = second.load();
    second.track('acme');
    await Promise.all([loading, second.add([{ integratorId: 'acme', bps: -111 }])]);
    expect(parseRollingMarkout((await redis.hget(key, 'acme'))!).bps.slice(-2)).toEqual([-110, -111]);
    // -12 … -111: mean -61.5.
    expect(await gauge(again, 'ledger_markout_60s_bps', 'acme')).toBe(-61.5);
    expect(await gauge(again, 'ledger_markout_60s_bps', 'beta')).toBe(2.5);
    expect(await gauge(again, 'ledger_markout_60s_swaps', 'beta')).toBe(1);
    expect(await gauge(again, 'ledger_markout_60s_swaps', 'broken')).toBeUndefined();
  });

  it('behavior: a markout that is not a finite number (a zero-leg swap) counts in no mean, is never stored, and a null an older ledger stored is skipped on load', async () => {
    const key = keys.ledgerMarkouts(CHAIN);
    // What a ledger before this rule left: an Infinity, written by JSON as null.
    await redis.hset(key, 'dusty', JSON.stringify({ bps: [-30, Infinity, -10] }));
    const metrics = createLedgerMetrics({ chainId: CHAIN, defaultMetrics: false });
    const rolling = new RollingMarkouts(redis, key, metrics, logger);
    await rolling.load();
    await rolling.add([
      { integratorId: 'dusty', bps: -Infinity },
      { integratorId: 'dusty', bps: NaN },
      { integratorId: 'dusty', bps: -20 },
    ]);
    expect(await gauge(metrics, 'ledger_markout_60s_bps', 'dusty')).toBe(-20);
    expect(await gauge(metrics, 'ledger_markout_60s_swaps', 'dusty')).toBe(3);
    expect(await redis.hget(key, 'dusty')).toBe('{"bps":[-30,-10,-20],"referenceBps":[]}');
  });

  it("behavior: the markouts against the reference are kept beside the mid's, as their own metrics, and a restart goes on from both", async () => {
    const key = keys.ledgerMarkouts(CHAIN) + ':reference-test';
    const metrics = createLedgerMetrics({ chainId: CHAIN, defaultMetrics: false });
    const first = new RollingMarkouts(redis, key, metrics, logger);
    await first.load();
    first.track('frozen');
    expect(await gauge(metrics, 'ledger_reference_markout_60s_bps', 'frozen')).toBeNaN();
    expect(await gauge(metrics, 'ledger_reference_markout_60s_swaps', 'frozen')).toBe(0);
    // A frozen curve: 0 against its own mid, a loss against the reference; a pair without one adds the mid's alone.
    await first.add([
      { integratorId: 'frozen', bps: 0, referenceBps: -80 },
      { integratorId: 'frozen', bps: 2, referenceBps: -60 },
      { integratorId: 'frozen', bps: 1 },
    ]);
    expect(await gauge(metrics, 'ledger_markout_60s_bps', 'frozen')).toBe(1);
    expect(await gauge(metrics, 'ledger_markout_60s_swaps', 'frozen')).toBe(3);
    expect(await gauge(metrics, 'ledger_reference_markout_60s_bps', 'frozen')).toBe(-70);
    expect(await gauge(metrics, 'ledger_reference_markout_60s_swaps', 'frozen')).toBe(2);
    expect(parseRollingMarkout((await redis.hget(key, 'frozen'))!)).toEqual({
      bps: [0, 2, 1],
      referenceBps: [-80, -60],
    });

    const again = createLedgerMetrics({ chainId: CHAIN, defaultMetrics: false });
    const second = new RollingMarkouts(redis, key, again, logger);
    await second.load();
    await second.add([{ integratorId: 'frozen', referenceBps: -100 }]);
    expect(await gauge(again, 'ledger_reference_markout_60s_bps', 'frozen')).toBe(-80);
    expect(await gauge(again, 'ledger_markout_60s_swaps', 'frozen')).toBe(3);
  });
});
