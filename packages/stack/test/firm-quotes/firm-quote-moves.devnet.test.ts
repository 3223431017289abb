/**
 * A firm quote whose curve moves before the swap, on every chain (the 18-decimal USDT chain 56
 * included) and both sides, through the whole stack as `npm start` runs it (testkit's
 * startSystem, a block per transaction): a move against the taker smaller than `slippageBps`
 * executes, and the user receives what the router pays then (the reference curve's output of the
 * moved curve, below the quote, at least the minimum); a move past `slippageBps` reverts
 * InsufficientOutput. firm-quote.devnet.test.ts holds the unmoved case on every chain and side, and
 * what `audit tx` and the settlement report of a moved one.
 *
 * And a curve moved so that its first tier gives value away while the book still looks in band
 * (the indexer's mid averages the book's first levels, which span the tier): a firm quote inside
 * that tier, priced past the band against the reference, is refused 503 PAIR_UNAVAILABLE; one
 * across the tiers, within the band, is signed and executes on the router.
 */
import type { Hex } from 'viem';
import { MockV3AggregatorArtifact, PmmRouterArtifact, swapOut, type CurveSide, type RouterCurve } from '@pmm/contracts';
import { REFERENCE_FEED_DECIMALS } from '@pmm/devnet';
import { midX18FromFeedAnswer } from '@pmm/protocol';
import {
  approveRouter,
  bookAt,
  curveOn,
  moveMarket,
  revertName,
  sendSwap,
  setCurve,
  signFirm,
  startSystem,
  swapChain,
  until,
  type SwapChain,
  type System,
} from '@pmm/testkit';

const routerAbi = PmmRouterArtifact.abi;

jest.setTimeout(240_000);

const CHAINS = [8453, 56, 4663] as const;
const FEE = 30n;
const SLIPPAGE_BPS = 100;

let sys: System;

beforeAll(async () => {
  sys = await startSystem({
    chains: [...CHAINS],
    blockIntervalMs: 0,
    // The deadlines are the hostile-node tests' and the overload drill's subject; on a shared 2-core
    // machine they must not decide here.
    env: {
      signer: { FIRM_QUOTE_DEADLINE_MS: '2000', MAX_SIGN_DEADLINE_MS: '2000' },
      gateway: { SIGN_DEADLINE_MS: '2000' },
    },
  });
});

afterAll(async () => {
  await sys?.stop();
});

/** The curve moved `ppm` against the taker of `side`: asks dearer (mid up), bids cheaper (mid down). */
function against(curve: RouterCurve, side: CurveSide, ppm: bigint): RouterCurve {
  const factor = side === 'ask' ? 1_000_000n + ppm : 1_000_000n - ppm;
  return { ...curve, midPriceX18: (curve.midPriceX18 * factor) / 1_000_000n };
}

/** Quotes `amountIn` with SLIPPAGE_BPS on a fresh block, then moves the curve `ppm` against the taker. */
async function quoteThenMove(x: SwapChain, side: CurveSide, amountIn: bigint, ppm: bigint) {
  const base = x.c.baseTokens[0]!.address;
  const quote = x.c.quoteToken.address;
  const [tokenIn, tokenOut] = side === 'ask' ? [quote, base] : [base, quote];
  await bookAt(x, await approveRouter(x, tokenIn, amountIn));
  const firm = await signFirm(x, tokenIn, tokenOut, amountIn, FEE, { slippageBps: SLIPPAGE_BPS });
  expect(BigInt(firm.minAmountOut)).toBe((BigInt(firm.amountOut) * BigInt(10_000 - SLIPPAGE_BPS)) / 10_000n);
  const moved = against(await curveOn(x, base), side, ppm);
  await moveMarket(x, base, moved);
  return { firm, moved, tokenOut };
}

describe.each(CHAINS)('chain %i: the curve moves between quote and swap', (chainId) => {
  it.each([['ask'], ['bid']] as const)(
    'behavior: %s side: a move within slippageBps pays what the router pays then; one past it reverts InsufficientOutput',
    async (side) => {
      const x = swapChain(sys, chainId);
      const curve = await curveOn(x, x.c.baseTokens[0]!.address);
      // Inside the first tier: a thousand quote units in, or a quarter of the first bid tier's base.
      const amountIn = side === 'ask' ? 1_000n * 10n ** BigInt(x.c.quoteToken.decimals) : curve.bidDepths[0]! / 4n;

      // 0.5 % against the taker, with 1 % slippage: executes, below the quote.
      const within = await quoteThenMove(x, side, amountIn, 5_000n);
      const done = await sendSwap(x, within.firm.calldata, within.tokenOut);
      expect(done.received).toBe(swapOut(within.moved, side, amountIn, FEE));
      expect(done.received).toBeLessThan(BigInt(within.firm.amountOut));
      expect(done.received).toBeGreaterThanOrEqual(BigInt(within.firm.minAmountOut));

      // 2 % against the taker, with 1 % slippage: the router refuses.
      const past = await quoteThenMove(x, side, amountIn, 20_000n);
      expect(swapOut(past.moved, side, amountIn, FEE)).toBeLessThan(BigInt(past.firm.minAmountOut));
      const sent = x.user.sendTransaction({ to: x.c.contracts.router as Hex, data: past.firm.calldata });
      expect(await revertName(sent, routerAbi, x.pub)).toBe('InsufficientOutput');
    },
  );
});

/** The pair's reference as a router mid (quote raw per base raw × 1e18), read from its feed. */
async function referenceMidX18(x: SwapChain, base: string): Promise<bigint> {
  const [, answer] = (await x.pub.readContract({
    address: x.c.references[base]!.feed as Hex,
    abi: MockV3AggregatorArtifact.abi,
    functionName: 'latestRoundData',
  })) as readonly [bigint, bigint, bigint, bigint, bigint];
  const token = x.c.baseTokens.find((t) => t.address === base)!;
  return midX18FromFeedAnswer(answer, {
    feedDecimals: REFERENCE_FEED_DECIMALS,
    baseDecimals: token.decimals,
    quoteDecimals: x.c.quoteToken.decimals,
  });
}

/**
 * A curve 70 bps off `referenceX18` against the maker on `side`'s taker (asks below it, bids
 * above), at no spread for a first tier of one quote unit's worth of base, then 80 bps of spread
 * on the rest of that side (the other side at no spread). Inside the first tier the taker's price
 * is 70 bps off the reference, past the 50 bps band on the side that gives value away; across the
 * tiers it is within about 10 bps of it. The book's first level (100 quote units) averages the two
 * tiers, so the book's mid stays some 30 bps off the reference: in band, the pair served.
 */
function givingFirstTier(
  curve: RouterCurve,
  side: CurveSide,
  referenceX18: bigint,
  quoteDecimals: number,
): RouterCurve {
  const mid = (referenceX18 * (side === 'ask' ? 993_000n : 1_007_000n)) / 1_000_000n;
  const tier = (10n ** BigInt(quoteDecimals) * 10n ** 18n) / mid; // one quote unit's worth of base
  const depths = side === 'ask' ? curve.askDepths : curve.bidDepths;
  const given = { depths: [tier, depths.at(-1)!], spreads: [0n, 8_000n] };
  const flat = (d: readonly bigint[]) => ({ depths: d, spreads: d.map(() => 0n) });
  const [ask, bid] = side === 'ask' ? [given, flat(curve.bidDepths)] : [flat(curve.askDepths), given];
  return {
    midPriceX18: mid,
    askDepths: ask.depths,
    askSpreadsPpm: ask.spreads,
    bidDepths: bid.depths,
    bidSpreadsPpm: bid.spreads,
  };
}

/** A sign with `amountIn` through the gateway: the status and the error's code, or the firm quote. */
async function signAnswer(x: SwapChain, tokenIn: string, tokenOut: string, amountIn: bigint) {
  const res = await fetch(`${x.sys.gateway.url}/v2/swap/sign`, {
    method: 'POST',
    headers: { 'X-API-KEY': x.sys.gateway.apiKey, 'Content-Type': 'application/json' },
    body: JSON.stringify({
      chainId: x.c.chainId,
      tokenIn,
      tokenOut,
      fee: String(FEE),
      userAddress: x.c.testUser.address,
      amountIn: amountIn.toString(),
    }),
  });
  const body = (await res.json()) as { error?: { code: string }; calldata?: Hex; amountOut?: string };
  return { status: res.status, code: body.error?.code, retryAfter: res.headers.get('retry-after'), body };
}

/** The signer's count of firm quotes refused for their price against the reference, on `chainId`. */
async function firmPriceRefusals(chainId: number): Promise<number> {
  const text = await (await fetch(sys.processesOf('signer')[0]!.metricsUrl!)).text();
  const line = text
    .split('\n')
    .find(
      (l) =>
        l.startsWith('signer_reference_refusals_total{') &&
        l.includes(`chain="${chainId}"`) &&
        l.includes('reason="firm_price"'),
    );
  return line ? Number(line.split(' ').at(-1)) : 0;
}

describe.each(CHAINS)('chain %i: a firm quote held to the band against the reference', (chainId) => {
  it.each([['ask'], ['bid']] as const)(
    'behavior: %s side: inside a first tier priced past the band, refused 503 PAIR_UNAVAILABLE; across the tiers, within it, signed and executed',
    async (side) => {
      const x = swapChain(sys, chainId);
      const base = x.c.baseTokens[0]!.address;
      const quote = x.c.quoteToken.address;
      const [tokenIn, tokenOut] = side === 'ask' ? [quote, base] : [base, quote];
      const before = await curveOn(x, base);
      const reference = await referenceMidX18(x, base);
      const given = givingFirstTier(before, side, reference, x.c.quoteToken.decimals);
      // The curve alone moves: the reference stays where the market is.
      const moved = Number(await setCurve({ pub: x.pub, owner: x.owner, router: x.c.contracts.router }, base, given));
      const unit = 10n ** BigInt(x.c.quoteToken.decimals);
      const firstTier = given[side === 'ask' ? 'askDepths' : 'bidDepths'][0]!;
      const [inside, across] = side === 'ask' ? [unit / 2n, 1_000n * unit] : [firstTier / 2n, firstTier * 400n];
      await bookAt(x, await approveRouter(x, tokenIn, across));
      // The pair is served: the book's mid is in band, so only the firm price can refuse.
      const book = await bookAt(x, moved);
      expect(book.pairs.some((p) => p.baseToken.toLowerCase() === base.toLowerCase())).toBe(true);

      // Inside the first tier the taker would buy the base 70 bps below the reference (or sell it
      // 70 bps above): past the 50 bps band on the side that gives value away.
      const counted = await firmPriceRefusals(chainId);
      const refused = await signAnswer(x, tokenIn, tokenOut, inside);
      expect(refused).toMatchObject({ status: 503, code: 'PAIR_UNAVAILABLE' });
      expect(Number(refused.retryAfter)).toBeGreaterThanOrEqual(1);
      // Refused for its price, not because the pair was withheld.
      expect(await firmPriceRefusals(chainId)).toBe(counted + 1);
      // The same tier priced off-chain against the reference: the refusal is the band's, not chance.
      const price = (amountIn: bigint) => {
        const out = swapOut(given, side, amountIn, 0n);
        return (
          Number(side === 'ask' ? (amountIn * 10n ** 18n) / out : (out * 10n ** 18n) / amountIn) / Number(reference)
        );
      };
      expect(Math.abs(price(inside) - 1)).toBeGreaterThan(0.006);
      expect(Math.abs(price(across) - 1)).toBeLessThan(0.002);

      // Across the tiers the price is within the band: signed, and the router pays it.
      const signed = await until(
        async () => {
          const a = await signAnswer(x, tokenIn, tokenOut, across);
          return a.status === 200 && a.body;
        },
        30_000,
        `chain ${chainId}: ${side}: a firm quote across the tiers signed`,
        200,
      );
      const done = await sendSwap(x, signed.calldata!, tokenOut);
      expect(done.received).toBe(BigInt(signed.amountOut!));
      expect(done.received).toBe(swapOut(given, side, across, FEE));

      // The curve back with its reference, for the next case.
      await moveMarket(x, base, { ...before, midPriceX18: reference });
    },
  );
});
