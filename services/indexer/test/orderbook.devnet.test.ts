/**
 * The indexer in-process against a real devnet (chains 8453: USDC 6 / WETH 18 / WBTC 8, and
 * 56: USDT 18) and a real Redis: the book equals the orderbook predicted from the reference
 * curve, the reserves and the ladder; summing levels reproduces on-chain quote() (read with
 * viem, signed with viem: independent of the code under test); the book follows the chain.
 */
import Redis from 'ioredis';
import { type Hex } from 'viem';
import { chainClients, startSystem, until, type System } from '@pmm/testkit';
import { privateKeyToAccount } from 'viem/accounts';
import { PmmRouterArtifact, TestTokenArtifact, type RouterCurve } from '@pmm/contracts';
import { redisKeys } from '@pmm/core';
import { summarizeLevels, type OrderbookLevel, type OrderbookResponse, type PairOrderbook } from '@pmm/protocol';
import { deployerWallet, seedPlan, type ChainStack } from '@pmm/devnet';
import { startIndexer, type BlockEvent, type RunningIndexer } from '../src';
import { askLadder, resolveLadder, toRawAmounts } from '../src/domain/ladder';
import { indexerConfig } from './support/indexer-env';
import { predictPairBook, predictSamples } from './support/predict-book';
import { randomPrefix } from './support/redis';
import { waitForBook } from './support/stored-book';

jest.setTimeout(120_000);

/** Explicit ladders for 8453: they cross tiers, the curve's depth (bids) and the reserve (asks). */
const LADDER_8453 = {
  WETH: { asks: ['1000', '30000', '100000', '300000', '600000'], bids: ['1', '10', '40', '100', '250'] },
  WBTC: { asks: ['5000', '60000', '300000', '1000000'], bids: ['0.5', '2', '10', '25'] },
};

let sys: System;
let redis: Redis;
const prefix = randomPrefix();
const keys = redisKeys(prefix);
const running: RunningIndexer[] = [];

/** On-chain quote() at `blockNumber`, signed with viem's signTypedData by the devnet quoter. */
async function onChainQuote(
  c: ChainStack,
  tokenIn: string,
  tokenOut: string,
  amountIn: bigint,
  block: OrderbookResponse,
): Promise<bigint> {
  const cl = chainClients(c);
  const account = privateKeyToAccount(c.quoter.privateKey as Hex);
  const ts = BigInt(block.blockTime) * 1000n;
  const sig = await account.signTypedData({
    domain: {
      name: 'VerificationImpl',
      version: '1',
      chainId: c.chainId,
      verifyingContract: c.contracts.verifier as Hex,
    },
    types: {
      AmmVerification: [
        { name: 'tokenIn', type: 'address' },
        { name: 'tokenOut', type: 'address' },
        { name: 'timestampInMilisec', type: 'uint256' },
      ],
    },
    primaryType: 'AmmVerification',
    message: { tokenIn: tokenIn as Hex, tokenOut: tokenOut as Hex, timestampInMilisec: ts },
  });
  return (await cl.publicClient.readContract({
    address: c.contracts.router as Hex,
    abi: PmmRouterArtifact.abi,
    functionName: 'quote',
    args: [tokenIn as Hex, amountIn, tokenOut as Hex, ts, sig],
    blockNumber: BigInt(block.blockNumber),
  })) as bigint;
}

/**
 * For every prefix of the levels, Σ amount is the base of one of the on-chain ladder points,
 * and Σ price × amount is that point's quote() result, rounded against the taker by less than
 * 1e-11 of it (12 significant digits per price): asks cost at least what quote() asks, bids pay
 * at most what quote() pays. Every level boundary is a ladder point, and the last is the last
 * point.
 */
function checkPrefixes(
  levels: readonly OrderbookLevel[],
  points: readonly { base: bigint; quote: bigint }[],
  side: 'ask' | 'bid',
  baseDecimals: number,
  quoteDecimals: number,
): void {
  expect(levels.length).toBeGreaterThan(0);
  for (let k = 1; k <= levels.length; k++) {
    const sum = summarizeLevels(levels.slice(0, k), baseDecimals, quoteDecimals);
    const point = points.find((p) => p.base === sum.base);
    if (!point) throw new Error(`levels 1..${k} sum to ${sum.base}, which is no ladder point`);
    const exact = point.quote * sum.quoteDenominator;
    const slack = exact / 10n ** 11n;
    if (side === 'ask') {
      expect(sum.quoteNumerator).toBeGreaterThanOrEqual(exact);
      expect(sum.quoteNumerator - exact).toBeLessThanOrEqual(slack);
    } else {
      expect(sum.quoteNumerator).toBeLessThanOrEqual(exact);
      expect(exact - sum.quoteNumerator).toBeLessThanOrEqual(slack);
    }
  }
  expect(summarizeLevels(levels, baseDecimals, quoteDecimals).base).toBe(points[points.length - 1]!.base);
}

function pairOf(book: OrderbookResponse, base: string): PairOrderbook {
  const pair = book.pairs.find((p) => p.baseToken === base);
  if (!pair) throw new Error(`no pair for ${base} in the book`);
  return pair;
}

beforeAll(async () => {
  // The chains and a private Redis; the indexer runs in this process.
  sys = await startSystem({ chains: [8453, 56, 4663], blockIntervalMs: 400, services: [] });
  redis = new Redis(sys.redisUrl);
});

afterAll(async () => {
  await Promise.all(running.map((r) => r.stop()));
  redis?.disconnect();
  await sys?.stop();
});

describe('orderbook on the devnet', () => {
  it('behavior: chain 8453 (USDC 6, WETH 18, WBTC 8): the book equals the predicted one and sums back to quote() at every ladder point', async () => {
    const c = sys.chain(8453);
    const config = indexerConfig(c, prefix, { REDIS_URL: sys.redisUrl, LADDER: JSON.stringify(LADDER_8453) });
    const ix = await startIndexer(config, { defaultMetrics: false });
    running.push(ix);
    const book = await waitForBook(redis, keys.book(8453));
    const plan = seedPlan(8453);
    expect(book.chainId).toBe(8453);
    expect(book.pairs.map((p) => p.baseToken)).toEqual(c.baseTokens.map((b) => b.address));
    const quote = c.quoteToken;
    expect(quote.decimals).toBe(6);

    for (const [i, base] of c.baseTokens.entries()) {
      const planned = plan.baseTokens[i]!;
      const ladderSpec = LADDER_8453[base.symbol as 'WETH' | 'WBTC'];
      const ladder = {
        asks: toRawAmounts(ladderSpec.asks, quote.decimals),
        bids: toRawAmounts(ladderSpec.bids, base.decimals),
      };
      const reserves = { base: planned.routerReserve, quote: plan.quoteToken.routerReserve };
      const pair = pairOf(book, base.address);
      // Level for level.
      expect(pair).toEqual(predictPairBook(base, quote, planned.curve, ladder, reserves));
      expect(pair.quoteToken).toBe(quote.address);
      // The ladders really are cut: asks by the reserve (WETH), bids by the curve's depth.
      const askSamples = predictSamples(planned.curve, 'ask', ladder.asks, reserves.base);
      const bidSamples = predictSamples(planned.curve, 'bid', ladder.bids, reserves.quote);
      expect(bidSamples.length).toBe(ladder.bids.length - 1);
      if (base.symbol === 'WETH') expect(askSamples.length).toBe(ladder.asks.length - 1);
      // At most one level per ladder step (steps at one rounded price are merged).
      expect(pair.asks.length).toBeGreaterThan(0);
      expect(pair.asks.length).toBeLessThanOrEqual(askSamples.length);
      expect(pair.bids.length).toBeGreaterThan(0);
      expect(pair.bids.length).toBeLessThanOrEqual(bidSamples.length);

      // Strictly best first: no two adjacent levels at one price.
      const num = (s: string) => Number(s);
      for (let k = 1; k < pair.asks.length; k++)
        expect(num(pair.asks[k]!.price)).toBeGreaterThan(num(pair.asks[k - 1]!.price));
      for (let k = 1; k < pair.bids.length; k++)
        expect(num(pair.bids[k]!.price)).toBeLessThan(num(pair.bids[k - 1]!.price));

      // Every prefix of levels sums to a ladder point read from on-chain quote() (base exactly,
      // quote within the 12-digit price rounding, against the taker).
      const askQuotes = await Promise.all(
        askSamples.map((_, k) => onChainQuote(c, quote.address, base.address, ladder.asks[k]!, book)),
      );
      const bidQuotes = await Promise.all(
        bidSamples.map((_, k) => onChainQuote(c, base.address, quote.address, ladder.bids[k]!, book)),
      );
      checkPrefixes(
        pair.asks,
        askQuotes.map((out, k) => ({ base: out, quote: ladder.asks[k]! })),
        'ask',
        base.decimals,
        quote.decimals,
      );
      checkPrefixes(
        pair.bids,
        bidQuotes.map((out, k) => ({ base: ladder.bids[k]!, quote: out })),
        'bid',
        base.decimals,
        quote.decimals,
      );
    }

    // The registry was written from the token contracts.
    const registry = JSON.parse((await redis.get(keys.pairs(8453)))!);
    expect(registry).toMatchObject({
      chainId: 8453,
      quoteToken: { address: quote.address, symbol: 'USDC', decimals: 6 },
      baseTokens: c.baseTokens.map((b) => ({ address: b.address, symbol: b.symbol, decimals: b.decimals })),
    });
    // The book has a staleness TTL.
    const ttl = await redis.pttl(keys.book(8453));
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(4000);
  });

  it('behavior: chain 56 (USDT 18) with the default ladder: asks at the default notionals, bids converted at the probed price', async () => {
    const c = sys.chain(56);
    const ix = await startIndexer(indexerConfig(c, prefix, { REDIS_URL: sys.redisUrl }), { defaultMetrics: false });
    running.push(ix);
    const book = await waitForBook(redis, keys.book(56));
    const plan = seedPlan(56);
    const quote = c.quoteToken;
    expect(quote.decimals).toBe(18);
    for (const [i, base] of c.baseTokens.entries()) {
      const planned = plan.baseTokens[i]!;
      const reserves = { base: planned.routerReserve, quote: plan.quoteToken.routerReserve };
      // The probe: the first ask notional, priced by the reference curve.
      const firstNotional = askLadder({}, base, quote)[0]!;
      const probe = {
        quoteIn: firstNotional,
        baseOut: predictSamples(planned.curve, 'ask', [firstNotional], reserves.base)[0]!.amountOut,
      };
      const ladder = resolveLadder({}, base, quote, probe);
      expect(ladder.asks).toHaveLength(12);
      expect(ladder.asks[0]).toBe(100n * 10n ** 18n);
      expect(pairOf(book, base.address)).toEqual(predictPairBook(base, quote, planned.curve, ladder, reserves));
    }
  });

  it('behavior: with only an HTTP URL and no Multicall3, polling and one JSON-RPC batch per block give the same book', async () => {
    // 4663: the chain registry has no canonical Multicall3 there to fill in.
    const c = sys.chain(4663);
    const fallbackPrefix = randomPrefix();
    const events: BlockEvent[] = [];
    const { multicall3: _unused, ...noMulticall } = c.contracts;
    const chain = { ...c, wsUrl: undefined, contracts: noMulticall } as unknown as ChainStack;
    const config = indexerConfig(chain, fallbackPrefix, { REDIS_URL: sys.redisUrl, POLL_INTERVAL_MS: '200' });
    const ix = await startIndexer(config, { defaultMetrics: false, onBlock: (e) => events.push(e) });
    running.push(ix);
    const book = await waitForBook(redis, redisKeys(fallbackPrefix).book(4663));
    const plan = seedPlan(4663);
    for (const [i, base] of c.baseTokens.entries()) {
      const planned = plan.baseTokens[i]!;
      const reserves = { base: planned.routerReserve, quote: plan.quoteToken.routerReserve };
      const firstNotional = askLadder({}, base, c.quoteToken)[0]!;
      const probe = {
        quoteIn: firstNotional,
        baseOut: predictSamples(planned.curve, 'ask', [firstNotional], reserves.base)[0]!.amountOut,
      };
      expect(pairOf(book, base.address)).toEqual(
        predictPairBook(base, c.quoteToken, planned.curve, resolveLadder({}, base, c.quoteToken, probe), reserves),
      );
    }
    // One eth_call per quote() plus the reserves, all in one batch round trip. The block's event
    // is reported once its write has returned: the poll above may see the book a moment earlier.
    const written = await until(() => events.find((e) => e.outcome === 'written'), 5_000, 'a written block event');
    expect(written?.ethCalls).toBe(1 + 2 * 24);
    expect(ix.blockSource.rpc.kind).toBe('http');
    // The deepest ladder points revert (DepthExceeded, InsufficientReserve): with their revert
    // data, so none is counted as a failure without data (the out-of-gas sign, CALL_GAS).
    const metrics = await (await fetch(`http://127.0.0.1:${ix.served.port}/metrics`)).text();
    expect(metrics).toMatch(/^indexer_quote_calls_per_block(\{[^}]*\})? 48$/m);
    expect(metrics).toMatch(/^indexer_calls_failed_without_data_total(\{[^}]*\})? 0$/m);
  });

  it('behavior: the book follows the chain: a curve change and a reserve change appear with their block number', async () => {
    const c = sys.chain(8453);
    const cl = chainClients(c);
    const deployer = cl.wallet(deployerWallet().privateKey);
    const plan = seedPlan(8453);
    const weth = c.baseTokens[0]!;
    const wbtc = c.baseTokens[1]!;
    const quote = c.quoteToken;

    // New WETH curve: mid 3100, wider spreads.
    const old = plan.baseTokens[0]!.curve;
    const curve: RouterCurve = {
      ...old,
      midPriceX18: (old.midPriceX18 * 31n) / 30n,
      askSpreadsPpm: [1000n, 2000n, 5000n],
    };
    const curveTx = await deployer.writeContract({
      address: c.contracts.router as Hex,
      abi: PmmRouterArtifact.abi,
      functionName: 'setCurve',
      args: [
        weth.address as Hex,
        curve.midPriceX18,
        curve.askDepths,
        curve.askSpreadsPpm,
        curve.bidDepths,
        curve.bidSpreadsPpm,
      ],
    });
    const curveBlock = Number((await cl.publicClient.waitForTransactionReceipt({ hash: curveTx })).blockNumber);
    const afterCurve = await waitForBook(redis, keys.book(8453), curveBlock);
    const wethLadder = { asks: toRawAmounts(LADDER_8453.WETH.asks, 6), bids: toRawAmounts(LADDER_8453.WETH.bids, 18) };
    const seeded = { base: plan.baseTokens[0]!.routerReserve, quote: plan.quoteToken.routerReserve };
    expect(pairOf(afterCurve, weth.address)).toEqual(predictPairBook(weth, quote, curve, wethLadder, seeded));

    // More WBTC in the router: the 1,000,000 USDC ask point (≈16.6 WBTC) is over the seeded
    // 10 WBTC reserve; minting 10 more makes it payable, so the asks gain a level.
    const wbtcPlan = plan.baseTokens[1]!;
    const wbtcLadder = { asks: toRawAmounts(LADDER_8453.WBTC.asks, 6), bids: toRawAmounts(LADDER_8453.WBTC.bids, 8) };
    const before = pairOf(afterCurve, wbtc.address);
    const minted = 10n * 10n ** 8n;
    const mintTx = await deployer.writeContract({
      address: wbtc.address as Hex,
      abi: TestTokenArtifact.abi,
      functionName: 'mint',
      args: [c.contracts.router as Hex, minted],
    });
    const mintBlock = Number((await cl.publicClient.waitForTransactionReceipt({ hash: mintTx })).blockNumber);
    const afterMint = await waitForBook(redis, keys.book(8453), mintBlock);
    const expected = predictPairBook(wbtc, quote, wbtcPlan.curve, wbtcLadder, {
      base: wbtcPlan.routerReserve + minted,
      quote: seeded.quote,
    });
    expect(pairOf(afterMint, wbtc.address)).toEqual(expected);
    expect(expected.asks.length).toBeGreaterThan(before.asks.length);
  });
});
