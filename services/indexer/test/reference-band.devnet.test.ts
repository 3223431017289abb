/**
 * The drills, on every devnet chain with a moving market (8453, 56 whose quote token has 18
 * decimals, and 4663), an indexer in-process and a real Redis: each pair's reference feed read in the block
 * call (still one eth_call per block), and a pair withheld from the book in the first block whose
 * on-chain state shows the breach (read independently with viem at that block), the other pair
 * untouched, and served again after its recovery blocks:
 * - a frozen curve while the market (and its feed) walks;
 * - a curve skewed by ×10¹² (the decimals class of error); a pair in watch mode skewed alike is
 *   only reported (and its metric set), never withheld;
 * - a stopped feed (and a curve that stopped with it), withheld once older than its limit;
 * - a hostile feed: a negative answer, an updatedAt in the future, a round older than the last.
 * Each transition in and out of band is in the chain's log with its block and values (what
 * `risk history` shows).
 */
import Redis from 'ioredis';
import type { Address } from 'viem';
import { chainClients, startSystem, until, type System } from '@pmm/testkit';
import { MockV3AggregatorArtifact, PmmRouterArtifact } from '@pmm/contracts';
import {
  BAND_LOG_FIELD,
  bookBandKey,
  bookBandLogKey,
  decodeBandRecord,
  decodeBandTransition,
  redisKeys,
  type BandRecord,
} from '@pmm/core';
import { midX18FromFeedAnswer, type OrderbookResponse } from '@pmm/protocol';
import { REFERENCE_FEED_DECIMALS, type ChainStack, type MarketControls } from '@pmm/devnet';
import { startIndexer, type BlockEvent, type RunningIndexer } from '../src';
import { indexerConfig } from './support/indexer-env';
import { randomPrefix } from './support/redis';

jest.setTimeout(300_000);

const CHAINS = [8453, 56, 4663] as const;
/** Band of the drills: wide beside the market's moves (30 bps a block), so that only a fault breaches it. */
const BAND_BPS = 100;
const RECOVERY_BLOCKS = 3;
/** WETH's own age limit: the stopped-feed drill. */
const MAX_AGE_SECONDS = 4;

let sys: System;
const prefix = randomPrefix();
const keys = redisKeys(prefix);
const indexers: RunningIndexer[] = [];
const events = new Map<number, BlockEvent[]>();
/** Every book written, with the standing written beside it, per chain, in order. */
const written = new Map<number, { book: OrderbookResponse; band: BandRecord }[]>();
const subscribers: Redis[] = [];
let redis: Redis;

beforeAll(async () => {
  sys = await startSystem({
    chains: [...CHAINS],
    blockIntervalMs: 500,
    market: { volatilityBps: 30, seed: 21, feed: { deviationBps: 10, heartbeatSeconds: 2 } },
    services: [],
  });
  redis = new Redis(sys.redisUrl);
  for (const chainId of CHAINS) {
    const c = sys.chain(chainId);
    const [weth, wbtc] = c.baseTokens.map((t) => t.address);
    const references = {
      [weth!]: { feed: c.references[weth!]!.feed, maxAgeSeconds: MAX_AGE_SECONDS },
      // On 8453 the other pair only watches (the watch drill); on 56 and 4663 it is enforced (the control of every drill).
      [wbtc!]: { feed: c.references[wbtc!]!.feed, ...(chainId === 8453 ? { mode: 'watch' } : {}) },
    };
    const { chainId: id, rpcUrl, wsUrl, contracts } = c;
    const config = indexerConfig(c, prefix, {
      REDIS_URL: sys.redisUrl,
      CHAINS: JSON.stringify({ [id]: { chainId: id, rpcUrl, wsUrl, contracts, references } }),
      REFERENCE_MAX_DEVIATION_BELOW_BPS: String(BAND_BPS),
      REFERENCE_MAX_DEVIATION_ABOVE_BPS: String(BAND_BPS),
      REFERENCE_RECOVERY_BLOCKS: String(RECOVERY_BLOCKS),
    });
    events.set(chainId, []);
    written.set(chainId, []);
    // Each book as written: read at its announcement (blocks are 500 ms apart, the read takes 1).
    const sub = new Redis(sys.redisUrl);
    subscribers.push(sub);
    await sub.subscribe(keys.updates(chainId));
    sub.on('message', () => {
      void redis
        .multi()
        .get(keys.book(chainId))
        .get(bookBandKey(keys.book(chainId)))
        .exec()
        .then((r) => {
          const [[, book], [, band]] = r as [[null, string], [null, string]];
          const record = decodeBandRecord(band);
          if (!book || !record) return;
          const list = written.get(chainId)!;
          const parsed = JSON.parse(book) as OrderbookResponse;
          if (list.at(-1)?.book.blockNumber !== parsed.blockNumber) list.push({ book: parsed, band: record });
        });
    });
    indexers.push(await startIndexer(config, { defaultMetrics: false, onBlock: (e) => events.get(chainId)!.push(e) }));
  }
});

afterAll(async () => {
  await Promise.all(indexers.map((ix) => ix.stop()));
  for (const s of subscribers) s.disconnect();
  redis?.disconnect();
  await sys?.stop();
});

const baseOf = (c: ChainStack, symbol: string) => c.tokens[symbol]!.address;
const has = (book: OrderbookResponse, base: string) =>
  book.pairs.some((p) => p.baseToken.toLowerCase() === base.toLowerCase());

/** The on-chain truth at a block, read with viem: the curve's mid against the feed, and the feed's age. */
async function truthAt(c: ChainStack, base: string, blockNumber: number) {
  const { publicClient } = chainClients(c);
  const at = BigInt(blockNumber);
  const curve = (await publicClient.readContract({
    address: c.contracts.router as Address,
    abi: PmmRouterArtifact.abi,
    functionName: 'getCurve',
    args: [base as Address],
    blockNumber: at,
  })) as { midPriceX18: bigint };
  const [, answer, , updatedAt] = (await publicClient.readContract({
    address: c.references[base]!.feed as Address,
    abi: MockV3AggregatorArtifact.abi,
    functionName: 'latestRoundData',
    blockNumber: at,
  })) as readonly [bigint, bigint, bigint, bigint, bigint];
  const block = await publicClient.getBlock({ blockNumber: at });
  const token = c.baseTokens.find((t) => t.address === base)!;
  const reference = midX18FromFeedAnswer(answer, {
    feedDecimals: REFERENCE_FEED_DECIMALS,
    baseDecimals: token.decimals,
    quoteDecimals: c.quoteToken.decimals,
  });
  return {
    deviationBps: (Number(curve.midPriceX18) / Number(reference) - 1) * 10_000,
    ageSeconds: Number(block.timestamp - updatedAt),
  };
}

/** The first book written after `from` (index) without `base`, waited for. */
async function firstWithout(chainId: number, base: string, from: number, what: string) {
  const list = written.get(chainId)!;
  const at = await until(
    () => {
      const i = list.findIndex((w, k) => k >= from && !has(w.book, base));
      return i >= 0 && i;
    },
    90_000,
    what,
    100,
  );
  return { index: at, ...list[at]! };
}

/** The first book written after `from` with `base` again, waited for. */
async function firstWith(chainId: number, base: string, from: number, what: string) {
  const list = written.get(chainId)!;
  const at = await until(
    () => {
      const i = list.findIndex((w, k) => k >= from && has(w.book, base));
      return i >= 0 && i;
    },
    60_000,
    what,
    100,
  );
  return { index: at, ...list[at]! };
}

/**
 * Checks the way back: the `RECOVERY_BLOCKS − 1` books before the one that serves the pair again
 * were in band and still withheld (counting up), and the pair is in every later book so far.
 */
function checkRecovery(chainId: number, base: string, back: number) {
  const list = written.get(chainId)!;
  const key = base.toLowerCase();
  for (let k = 1; k < RECOVERY_BLOCKS; k++) {
    const before = list[back - k]!.band.pairs[key]!;
    expect(before).toMatchObject({ status: 'in_band', withheld: true, streak: RECOVERY_BLOCKS - k });
  }
  expect(list[back]!.band.pairs[key]).toMatchObject({ status: 'in_band', withheld: false, served: true });
}

async function drillFrozenCurve(chainId: number, market: MarketControls) {
  const c = sys.chain(chainId);
  const weth = baseOf(c, 'WETH');
  const wbtc = baseOf(c, 'WBTC');
  const list = written.get(chainId)!;
  await until(() => list.length >= 3 && list.at(-1)!.book.pairs.length === 2, 30_000, 'books with both pairs');
  const start = list.length;
  market.stopEngine(weth);
  const out = await firstWithout(chainId, weth, start, `chain ${chainId}: WETH withheld while its curve is frozen`);
  // The first block whose state shows the deviation past the band, and not one before.
  const truth = await truthAt(c, weth, out.book.blockNumber);
  expect(Math.abs(truth.deviationBps)).toBeGreaterThan(BAND_BPS - 0.01);
  const before = await truthAt(c, weth, list[out.index - 1]!.book.blockNumber);
  expect(Math.abs(before.deviationBps)).toBeLessThanOrEqual(BAND_BPS + 0.01);
  expect(out.band.pairs[weth.toLowerCase()]).toMatchObject({
    status: 'out_of_band',
    withheld: true,
    since: out.book.blockNumber,
  });
  expect(out.band.pairs[weth.toLowerCase()]!.deviationBps).toBeCloseTo(truth.deviationBps, 2);
  market.startEngine(weth);
  const back = await firstWith(chainId, weth, out.index, `chain ${chainId}: WETH back once its curve catches up`);
  checkRecovery(chainId, weth, back.index);
  // Both transitions in the chain's log, at the blocks of those books, with the values then.
  const log = (await redis.xrange(bookBandLogKey(keys.book(chainId)), '-', '+')).map(([, fields]) => {
    expect(fields[0]).toBe(BAND_LOG_FIELD);
    return decodeBandTransition(fields[1])!;
  });
  const ofWeth = log.filter((t) => t.base === weth.toLowerCase());
  expect(ofWeth.find((t) => t.block === out.book.blockNumber)).toMatchObject({
    to: 'out',
    symbol: 'WETH',
    status: 'out_of_band',
    withheld: true,
    deviationBps: out.band.pairs[weth.toLowerCase()]!.deviationBps,
  });
  expect(ofWeth.find((t) => t.block === back.book.blockNumber)).toMatchObject({ to: 'in', status: 'in_band' });
  // None for the other pair, which stayed in band.
  expect(log.filter((t) => t.base === wbtc.toLowerCase() && t.block <= back.book.blockNumber)).toEqual([]);
  // The other pair was in every book meanwhile.
  for (const w of list.slice(start, back.index + 1)) expect(has(w.book, wbtc)).toBe(true);
  return back.index;
}

async function drillSkew(chainId: number, market: MarketControls, from: number) {
  const c = sys.chain(chainId);
  const weth = baseOf(c, 'WETH');
  const wbtc = baseOf(c, 'WBTC');
  const list = written.get(chainId)!;
  const watching = chainId === 8453;
  market.skewCurve(weth, { times: 10n ** 12n });
  if (watching) market.skewCurve(wbtc, { times: 10n ** 12n }); // in watch mode: reported only
  const out = await firstWithout(chainId, weth, from, `chain ${chainId}: WETH withheld once skewed by ×10¹²`);
  const truth = await truthAt(c, weth, out.book.blockNumber);
  expect(truth.deviationBps).toBeGreaterThan(1e15);
  expect(Math.abs((await truthAt(c, weth, list[out.index - 1]!.book.blockNumber)).deviationBps)).toBeLessThan(BAND_BPS);
  if (watching) await checkWatched(chainId, wbtc, out.index);
  market.skewCurve(weth, undefined);
  market.skewCurve(wbtc, undefined);
  const back = await firstWith(chainId, weth, out.index, `chain ${chainId}: WETH back once the skew is gone`);
  checkRecovery(chainId, weth, back.index);
  for (const w of list.slice(from, back.index + 1)) expect(has(w.book, wbtc)).toBe(true);
  return back.index;
}

/** A pair in watch mode out of band: reported (its record, its metric), still in the book. */
async function checkWatched(chainId: number, wbtc: string, from: number) {
  const list = written.get(chainId)!;
  await until(
    () => list.slice(from).some((w) => w.band.pairs[wbtc.toLowerCase()]?.served === false),
    30_000,
    'WBTC out of band',
  );
  const watched = list.slice(from).find((w) => w.band.pairs[wbtc.toLowerCase()]?.served === false)!;
  // ×10¹² leaves the book no level at all (no_curve) or prices it far off (out_of_band).
  expect(watched.band.pairs[wbtc.toLowerCase()]).toMatchObject({ mode: 'watch', withheld: false, served: false });
  expect(['out_of_band', 'no_curve']).toContain(watched.band.pairs[wbtc.toLowerCase()]!.status);
  expect(has(watched.book, wbtc)).toBe(true);
  const metrics = await indexers[CHAINS.indexOf(chainId as (typeof CHAINS)[number])]!.metrics.registry.metrics();
  expect(metrics).toMatch(/indexer_reference_out_of_band\{pair="WBTC",mode="watch",service="indexer",chain="\d+"\} 1/);
}

async function drillStoppedFeed(chainId: number, market: MarketControls, from: number) {
  const c = sys.chain(chainId);
  const weth = baseOf(c, 'WETH');
  const list = written.get(chainId)!;
  // The curve stops with it: the deviation stays where it was, only the age grows.
  market.stopEngine(weth);
  market.stopFeed(weth);
  const out = await firstWithout(chainId, weth, from, `chain ${chainId}: WETH withheld once its reference is stale`);
  expect((await truthAt(c, weth, out.book.blockNumber)).ageSeconds).toBeGreaterThan(MAX_AGE_SECONDS);
  expect((await truthAt(c, weth, list[out.index - 1]!.book.blockNumber)).ageSeconds).toBeLessThanOrEqual(
    MAX_AGE_SECONDS,
  );
  expect(out.band.pairs[weth.toLowerCase()]).toMatchObject({ status: 'stale', withheld: true });
  return out.index;
}

async function drillHostileFeed(chainId: number, from: number) {
  const c = sys.chain(chainId);
  const weth = baseOf(c, 'WETH');
  const list = written.get(chainId)!;
  const { publicClient, wallet } = chainClients(c);
  const owner = wallet(c.testUser.privateKey);
  const feed = c.references[weth]!.feed as Address;
  const read = async () =>
    (await publicClient.readContract({
      address: feed,
      abi: MockV3AggregatorArtifact.abi,
      functionName: 'latestRoundData',
    })) as readonly [bigint, bigint, bigint, bigint, bigint];
  const set = async (roundId: bigint, answer: bigint, updatedAt: bigint) => {
    const hash = await owner.writeContract({
      address: feed,
      abi: MockV3AggregatorArtifact.abi,
      functionName: 'updateRoundData',
      args: [roundId, answer, updatedAt, updatedAt],
    });
    const receipt = await publicClient.waitForTransactionReceipt({ hash });
    return Number(receipt.blockNumber);
  };
  const statusAfter = async (block: number) => {
    const w = await until(
      () => list.find((x, k) => k >= from && x.book.blockNumber >= block),
      20_000,
      `a book at ${block}`,
    );
    return { withheld: !has(w.book, weth), status: w.band.pairs[weth.toLowerCase()]!.status };
  };
  const [round, answer] = await read();
  // The chain's time, not this machine's: an updatedAt past the block's time is a hostile answer.
  const now = (await publicClient.getBlock()).timestamp;
  // A fresh, honest round first (the stopped feed is stale): still withheld until it recovers.
  let block = await set(round + 1n, answer, now);
  expect((await statusAfter(block)).status).toBe('in_band');
  block = await set(round + 2n, -answer, now);
  expect(await statusAfter(block)).toEqual({ withheld: true, status: 'unreadable' });
  block = await set(round + 3n, answer, now + 3_600n);
  expect(await statusAfter(block)).toEqual({ withheld: true, status: 'unreadable' });
  block = await set(round, answer, now); // a round older than the one accepted
  expect(await statusAfter(block)).toEqual({ withheld: true, status: 'unreadable' });
}

it('drills: frozen curve, ×10¹² skew (and a watch pair), stopped feed, hostile feed — on each chain, one eth_call a block', async () => {
  await Promise.all(
    CHAINS.map(async (chainId) => {
      const market = sys.devnet.market(chainId);
      let at = await drillFrozenCurve(chainId, market);
      at = await drillSkew(chainId, market, at);
      at = await drillStoppedFeed(chainId, market, at);
      await drillHostileFeed(chainId, at);
      const computed = events.get(chainId)!.filter((e) => e.ethCalls !== undefined);
      expect(computed.length).toBeGreaterThan(20);
      for (const e of computed) expect(e.ethCalls).toBe(1);
    }),
  );
});
