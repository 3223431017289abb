/**
 * A frozen curve's losses, seen against the reference and not against the maker's own mid, end to
 * end on the devnet (processes as `npm start` runs them: indexer, signer, gateway and the ledger
 * with both markout limits, testkit's startSystem, chain 56 whose quote token has 18 decimals,
 * mining a block a second, with a moving market whose feed publishes every 5 bps).
 *
 * The pricing engine stops for WETH: its curve freezes while the market, and the reference with
 * it, walk on (the references only watch, so the pair stays served). Once the curve is a full
 * percent off the reference, the `dev` integrator takes the side the stale curve gives away (buys
 * WETH when the curve is below the reference, sells it when above): three swaps in one block.
 * Then, in `npm run markouts` (JSON, CSV and table), their markouts against the maker's own mid are
 * about zero (its mid never moved: only the half-spread, a gain) at every horizon, while against
 * the reference they are the loss, at the first block; the ledger's rolling 60 s figures are the
 * means of the report's 60 s values, each on its own basis; and the limit on markouts against the
 * reference halts the integrator while the one on its own mid, with the same floor, does not trip.
 * The chain is moved on to the 60 s horizon after the swaps, its five blocks mined at once (the
 * indexer and the ledger follow blocks up to 120 s ahead of the wall clock here): the test does
 * not wait out the minute.
 */
import {
  DEFAULT_KEY_PREFIX,
  HaltStore,
  bookBandKey,
  createRedis,
  decodeBandRecord,
  haltScopeName,
  redisKeys,
  redisReady,
  type RedisClient,
} from '@pmm/core';
import type { MarkoutReport, SwapMarkoutLine } from '@pmm/operator';
import { signFirm, until, type SwapChain, type System } from '@pmm/testkit';
import type { Hex } from 'viem';
import { inOneBlock, ledgerTestbed, mineAhead, startLedgerSystem } from '../support/ledger-devnet';

jest.setTimeout(600_000);

const CHAIN = 56;
const INTEGRATOR = 'dev';
const keys = redisKeys(DEFAULT_KEY_PREFIX);
/** The same floor on both bases, at the first block: only the reference's can trip here. */
const LIMITS = {
  LIMIT_MARKOUT_FLOOR_BPS: '-20',
  LIMIT_REFERENCE_MARKOUT_FLOOR_BPS: '-20',
  LIMIT_MARKOUT_HORIZON: '1b',
  LIMIT_MARKOUT_MIN_SWAPS: '3',
};
/**
 * How far off the reference the frozen curve must be before the swaps, bps: the market moves some
 * 30 bps a block, so a markout one block on stays well below zero.
 */
const STALE_BPS = 100;

let sys: System;
let bed: Awaited<ReturnType<typeof ledgerTestbed>>;
let x: SwapChain;
let weth: Hex;
let quote: Hex;
/** The records' server (the ledger, its markouts, the halts), as its administrator. */
let redis: RedisClient;
/** The books' server (each pair's standing), as its administrator. */
let books: RedisClient;

beforeAll(async () => {
  sys = await startLedgerSystem(
    CHAIN,
    LIMITS,
    { volatilityBps: 30, seed: 49, feed: { deviationBps: 5, heartbeatSeconds: 2 } },
    { clockAhead: true },
  );
  bed = await ledgerTestbed(sys, CHAIN, 'reference-markouts-e2e');
  ({ x, weth, quote, redis } = bed);
  books = createRedis(sys.redisUrl, { name: 'reference-markouts-e2e-books' });
  await redisReady(books);
});

afterAll(async () => {
  books?.disconnect();
  await bed?.close();
  await sys?.stop();
});

/** WETH's curve against its reference at the indexer's last book, signed bps (positive: above). */
async function deviationBps(): Promise<number | undefined> {
  const band = decodeBandRecord(await books.get(bookBandKey(keys.book(CHAIN))));
  return band?.pairs[weth.toLowerCase()]?.deviationBps;
}

const markouts = (format: 'json' | 'csv' | 'table') => bed.markouts(format);
const metric = async (name: string) => {
  const value = await bed.metric(name, INTEGRATOR);
  return value === undefined ? undefined : Number(value);
};

const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / values.length;

it("behavior: a frozen curve's swaps mark about zero against its own mid and a loss against the reference; the reference's limit trips, the mid's does not", async () => {
  // The engine stops: WETH's curve stays where it is while the market walks.
  sys.devnet.market(CHAIN).stopEngine(weth);
  const stale = await until(
    async () => {
      const d = await deviationBps();
      return d !== undefined && Math.abs(d) >= STALE_BPS && d;
    },
    240_000,
    `WETH's frozen curve ${STALE_BPS} bps off its reference`,
    100,
  );
  // The side the stale curve gives away: its ask below the market (buy WETH), or its bid above it (sell).
  const buys = stale < 0;
  const [tokenIn, tokenOut] = buys ? [quote, weth] : [weth, quote];
  const amounts = buys
    ? [1_000n, 1_100n, 1_200n].map((q) => q * 10n ** BigInt(x.c.quoteToken.decimals))
    : [3n, 4n, 5n].map((tenths) => tenths * 10n ** 17n);
  const calls: Hex[] = [];
  // Each its own amount: the audit record of each then matches its swap.
  for (const amountIn of amounts) calls.push((await signFirm(x, tokenIn, tokenOut, amountIn, 10n)).calldata);
  const hashes = (await inOneBlock(x, calls)).map((h) => h.toLowerCase());
  // The chain moved on past the 5b and the 60 s horizons at once, rather than waiting out the
  // minute: the next block stamped 60 s after the swaps' (the market takes a step a block,
  // whatever its time).
  await mineAhead(x, hashes[0] as Hex, { blocks: 5, seconds: 60 });

  // Both 60 s figures: wait for them (the ledger reads the history 60 s past the block, by block time).
  await until(
    async () => (await metric('ledger_reference_markout_60s_swaps')) === 3,
    180_000,
    "the ledger's rolling 60 s markout against the reference over the three swaps",
    500,
  );
  // And the indexer's history at the fifth block (the ledger's 60 s figures need only the first).
  const ofOurs = (r: MarkoutReport) => r.swaps.filter((s) => hashes.includes(s.txHash.toLowerCase()));
  const report = await until(
    async () => {
      const r = JSON.parse((await markouts('json')).out) as MarkoutReport;
      return ofOurs(r).length === 3 && ofOurs(r).every((s) => s.markoutsBps['5b'] !== null) && r;
    },
    60_000,
    'the three swaps past their 5b horizon',
    250,
  );
  const ours = ofOurs(report);
  expect(ours).toHaveLength(3);
  const at = (s: SwapMarkoutLine, basis: 'markoutsBps' | 'referenceMarkoutsBps', h: '1b' | '5b' | '60s') =>
    s[basis][h] as number;
  for (const s of ours) {
    expect(s).toMatchObject({ integratorId: INTEGRATOR, side: buys ? 'ask' : 'bid' });
    // Against its own mid: the frozen curve never moved, so only the half-spread shows (5 bps, a gain).
    for (const h of ['1b', '5b', '60s'] as const) {
      expect(at(s, 'markoutsBps', h)).toBeGreaterThanOrEqual(0);
      expect(at(s, 'markoutsBps', h)).toBeLessThan(10);
    }
    // Against the reference one block on: the loss the stale curve gave away.
    expect(at(s, 'referenceMarkoutsBps', '1b')).toBeLessThan(-STALE_BPS / 2);
  }
  const pair = report.aggregates.find((a) => a.by === 'pair' && a.key === `${CHAIN}:WETH/USDT`)!;
  expect(pair.referenceMarkoutsBps['1b']!.mean).toBeLessThan(-STALE_BPS / 2);
  expect(Math.abs(pair.markoutsBps['1b']!.mean)).toBeLessThan(10);

  // The ledger's rolling figures are the report's 60 s values, each on its own basis.
  expect(await metric('ledger_markout_60s_swaps')).toBe(3);
  expect(await metric('ledger_markout_60s_bps')).toBeCloseTo(mean(ours.map((s) => at(s, 'markoutsBps', '60s'))), 6);
  expect(await metric('ledger_reference_markout_60s_bps')).toBeCloseTo(
    mean(ours.map((s) => at(s, 'referenceMarkoutsBps', '60s'))),
    6,
  );

  // The CSV and the table carry the same.
  const csv = (await markouts('csv')).out.trim().split('\n');
  const head = csv[0]!.split(',');
  for (const s of ours) {
    const row = csv.find((l) => l.includes(s.txHash))!.split(',');
    expect(Number(row[head.indexOf('ref_markout_1b_bps')])).toBeCloseTo(at(s, 'referenceMarkoutsBps', '1b'), 3);
  }
  const table = (await markouts('table')).out;
  expect(table).toMatch(/1b ref bps/);
  expect(table).toContain(pair.referenceMarkoutsBps['1b']!.mean.toFixed(2));

  // The limit against the reference halted the integrator; the one on its own mid did not trip.
  const halts = new HaltStore(redis, keys);
  const halt = await until(
    async () =>
      (await halts.active()).find((h) => haltScopeName(h.scope) === haltScopeName({ integratorId: INTEGRATOR })),
    60_000,
    'the integrator halted by its reference markout limit',
    250,
  );
  expect(halt.trip).toMatchObject({ limit: 'integrator-reference-markout', threshold: '-20' });
  expect(halt.reason).toMatch(
    /^limit integrator-reference-markout: dev's mean 1b markout against the reference on chain 56 .* over 3 swaps/,
  );
  const trips = (await (await fetch(sys.processesOf('ledger')[0]!.metricsUrl!)).text())
    .split('\n')
    .filter((l) => l.startsWith('ledger_limit_trips_total{') && !l.endsWith(' 0'));
  expect(trips).toEqual([expect.stringContaining('limit="integrator-reference-markout"')]);
});
