/**
 * The firm quote on the devnet, through the whole stack as `npm start` runs it (testkit's
 * startSystem: indexers, signer, gateway, one anvil per chain mining a block per transaction):
 * for each chain (the 18-decimal USDT chain 56 included), both sides, an amount inside the first
 * tier and one across tiers, a sign with `amountIn` names a block no older than the book
 * `/v2/price` serves, its `amountOut` is what the reference curve pays net of the fee, and a swap
 * mined in the very next block receives exactly `amountOut`. After the curve moves, the swap
 * receives what the router pays then (below the quote, within `slippageBps`), and a move past
 * `slippageBps` reverts InsufficientOutput. Amounts are read back with viem (balances), apart
 * from the code under test.
 */
import type { Hex } from 'viem';
import { PmmRouterArtifact, swapOut, type CurveSide, type RouterCurve } from '@pmm/contracts';
import { DEFAULT_KEY_PREFIX, createRedis, redisKeys, type RedisClient } from '@pmm/core';
import {
  approveRouter,
  bookAt,
  curveOn,
  type FirmSign,
  moveMarket,
  revertName,
  sendSwap,
  signFirm,
  startSystem,
  swapChain,
  type SwapChain,
  type System,
  until,
} from '@pmm/testkit';
import {
  AuditReader,
  createChainReader,
  runAuditCommand,
  runSettleCommand,
  type ChainReader,
  type SettlementReport,
} from '@pmm/operator';

const routerAbi = PmmRouterArtifact.abi;

jest.setTimeout(240_000);

const CHAINS = [8453, 56, 4663] as const;
const FEE = 30n;

let sys: System;
/** The records' server as the operator's `audit` and `settle` read it (Redis user `operator`). */
let operator: RedisClient;
const keys = redisKeys(DEFAULT_KEY_PREFIX);
/** Unix seconds before the first swap: the start of the settlement period. */
let startedSeconds = 0;

const ctx = new Map<number, SwapChain>();
/** Each chain's reader for `audit tx` and the settlement. */
const readers = new Map<number, ChainReader>();

beforeAll(async () => {
  // A block per transaction: the block after the quoted one is the swap's own.
  // The deadlines are the hostile-node tests' subject (signer/test/firm-quotes.test.ts) and the
  // overload drill's; here, on a shared 2-core machine running three chains and five services,
  // they must not decide the outcome.
  sys = await startSystem({
    chains: [...CHAINS],
    blockIntervalMs: 0,
    env: {
      signer: { FIRM_QUOTE_DEADLINE_MS: '2000', MAX_SIGN_DEADLINE_MS: '2000' },
      gateway: { SIGN_DEADLINE_MS: '2000' },
    },
  });
  operator = createRedis(sys.redisEnvOf('operator').REDIS_RECORDS_URL, { name: 'firm-quote-test' });
  startedSeconds = Math.floor(Date.now() / 1000) - 1;
  for (const id of CHAINS) {
    ctx.set(id, swapChain(sys, id));
    readers.set(id, createChainReader(id, sys.chain(id).rpcUrl));
  }
});

afterAll(async () => {
  for (const reader of readers.values()) reader.close();
  operator?.disconnect();
  await sys?.stop();
});

const sign = (
  x: SwapChain,
  tokenIn: string,
  tokenOut: string,
  amountIn: bigint,
  extra: object = {},
): Promise<FirmSign> => signFirm(x, tokenIn, tokenOut, amountIn, FEE, extra);

/** Amounts in of one side: half the first tier, and the first tier plus half the second. */
function amountsOf(curve: RouterCurve, side: CurveSide): { inside: bigint; across: bigint } {
  const depths = side === 'ask' ? curve.askDepths : curve.bidDepths;
  const [d1, d2] = [depths[0]!, depths[1]!];
  if (side === 'bid') return { inside: d1 / 2n, across: d1 + (d2 - d1) / 2n };
  // Quote in: what the tiers cost (base × price), from the curve's own mid and spreads.
  const spreads = curve.askSpreadsPpm;
  const cost = (base: bigint, spread: bigint) => (base * curve.midPriceX18 * (1_000_000n + spread)) / 10n ** 24n;
  const first = cost(d1, spreads[0]!);
  return { inside: first / 2n, across: first + cost((d2 - d1) / 2n, spreads[1]!) + 1n };
}

describe.each(CHAINS)('chain %i: the quoted amount is what executes', (chainId) => {
  it.each([['ask'], ['bid']] as const)(
    'behavior: %s side, inside one tier and across tiers: a swap in the next block receives exactly amountOut',
    async (side) => {
      const x = ctx.get(chainId)!;
      const base = x.c.baseTokens[0]!.address;
      const quote = x.c.quoteToken.address;
      const [tokenIn, tokenOut] = side === 'ask' ? [quote, base] : [base, quote];
      const curve = await curveOn(x, base);
      const { inside, across } = amountsOf(curve, side);
      for (const amountIn of [inside, across]) {
        const approved = await approveRouter(x, tokenIn, amountIn);
        const book = await bookAt(x, approved);
        const firm = await sign(x, tokenIn, tokenOut, amountIn, { slippageBps: 0 });
        // Never older than the served book; here exactly the approval's block (nothing mined since).
        expect(firm.blockNumber).toBeGreaterThanOrEqual(book.blockNumber);
        expect(firm.blockNumber).toBe(approved);
        expect(BigInt(firm.amountOut)).toBe(swapOut(curve, side, amountIn, FEE));
        expect(firm.minAmountOut).toBe(firm.amountOut);
        const done = await sendSwap(x, firm.calldata, tokenOut);
        expect(done.block).toBe(firm.blockNumber + 1);
        expect(done.received).toBe(BigInt(firm.amountOut));
      }
    },
  );
});

describe('the curve moves between quote and swap', () => {
  /** Sets the base's curve `movePpm` lower (the maker pays less for base). */
  async function lowerBids(x: SwapChain, base: string, curve: RouterCurve, movePpm: bigint): Promise<RouterCurve> {
    const moved = { ...curve, midPriceX18: (curve.midPriceX18 * (1_000_000n - movePpm)) / 1_000_000n };
    await moveMarket(x, base, moved);
    return moved;
  }

  it('behavior: within slippageBps the swap receives what the router pays then; past it, InsufficientOutput', async () => {
    const x = ctx.get(56)!;
    const base = x.c.baseTokens[0]!.address;
    const quote = x.c.quoteToken.address;
    const curve = await curveOn(x, base);
    const amountIn = curve.bidDepths[0]! / 4n;

    // 0.5 % lower after a quote with 1 % slippage: executes, below the quote.
    await bookAt(x, await approveRouter(x, base, amountIn));
    const firm = await sign(x, base, quote, amountIn, { slippageBps: 100 });
    expect(BigInt(firm.minAmountOut)).toBe((BigInt(firm.amountOut) * 9_900n) / 10_000n);
    const moved = await lowerBids(x, base, curve, 5_000n);
    const done = await sendSwap(x, firm.calldata, quote);
    expect(done.received).toBe(swapOut(moved, 'bid', amountIn, FEE));
    expect(done.received).toBeLessThan(BigInt(firm.amountOut));
    expect(done.received).toBeGreaterThanOrEqual(BigInt(firm.minAmountOut));
    const gapBps = Number(((done.received - BigInt(firm.amountOut)) * 1_000_000n) / BigInt(firm.amountOut)) / 100;
    expect(gapBps).toBeLessThan(-49);

    // `audit tx` shows the quote beside what executed, and the gap.
    const out: string[] = [];
    const code = await runAuditCommand(['tx', '56', done.hash], {
      trail: new AuditReader(operator, keys),
      chain: () => ({ reader: readers.get(56)!, router: x.c.contracts.router }),
      out: (l) => out.push(l),
      err: (l) => out.push(l),
    });
    expect(code).toBe(0);
    expect(out).toContain(
      `    quoted amountOut ${firm.amountOut} at block ${firm.blockNumber}; executed ${done.received} (${gapBps} bps)`,
    );

    // 2 % lower again after a quote with 1 % slippage: the router refuses.
    await bookAt(x, await approveRouter(x, base, amountIn));
    const tight = await sign(x, base, quote, amountIn, { slippageBps: 100 });
    await lowerBids(x, base, moved, 20_000n);
    const sent = x.user.sendTransaction({ to: x.c.contracts.router as Hex, data: tight.calldata });
    expect(await revertName(sent, routerAbi, x.pub)).toBe('InsufficientOutput');

    // The settlement report: every swap of this file had a quote; one executed below it, by the gap above.
    const to = Math.floor(Date.now() / 1000) + 1;
    await until(async () => Math.floor(Date.now() / 1000) > to, 5_000, 'the period to end', 100);
    // A block after the period on every chain: the report is complete.
    for (const y of ctx.values()) await approveRouter(y, y.c.quoteToken.address, 1n);
    const text: string[] = [];
    const settled = await runSettleCommand(
      ['--from', new Date(startedSeconds * 1000).toISOString(), '--to', new Date(to * 1000).toISOString()],
      {
        lookup: new AuditReader(operator, keys),
        chains: [...CHAINS],
        chain: (id: number) => ({
          reader: readers.get(id)!,
          router: ctx.get(id)!.c.contracts.router,
          helper: ctx.get(id)!.c.contracts.helper,
        }),
        out: (t: string) => text.push(t),
        err: () => undefined,
      },
    );
    expect(settled).toBe(0);
    const report = JSON.parse(text.join('')) as SettlementReport;
    expect(report.quotes).toHaveLength(1);
    const swapsDone = CHAINS.length * 4 + 1;
    expect(report.quotes[0]).toEqual({
      integratorId: report.swaps[0]!.integratorId,
      swaps: swapsDone,
      quoted: swapsDone,
      medianGapBps: 0,
      p95ShortfallBps: -gapBps,
      belowQuoteShare: 1 / swapsDone,
    });
    const line = report.swaps.find((l) => l.txHash === done.hash)!;
    expect(line.quoteGapBps).toBe(String(gapBps));
  });
});
