/**
 * A firm quote whose curve moves before the swap, on every chain (the 18-decimal USDT chain 56
 * included) and both sides, through the whole stack as `npm start` runs it (testkit's
 * startSystem, a block per transaction): a move against the taker smaller than `slippageBps`
 * executes, and the user receives what the router pays then (the reference curve's output of the
 * moved curve, below the quote, at least the minimum); a move past `slippageBps` reverts
 * InsufficientOutput. firm-quote.devnet.test.ts holds the unmoved case on every chain and side, and
 * what `audit tx` and the settlement report of a moved one.
 */
import type { Hex } from 'viem';
import { PmmRouterArtifact, swapOut, type CurveSide, type RouterCurve } from '@pmm/contracts';
import {
  approveRouter,
  bookAt,
  curveOn,
  moveMarket,
  revertName,
  sendSwap,
  signFirm,
  startSystem,
  swapChain,
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
