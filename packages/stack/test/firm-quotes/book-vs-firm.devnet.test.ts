/**
 * What the book shows is what a sign quotes (docs/decisions/0029-the-book-beside-the-firm-quote.md),
 * through the whole stack as `npm start` runs it (testkit's startSystem: one indexer per chain
 * building `/v2/price` from on-chain state, the signer, the gateway), on a still market: for every
 * pair of every chain (the 18-decimal USDT chain 56 included), both sides, every ladder size the
 * book offers and sizes between them, the amount the book implies (the SDK's estimateFromBook)
 * beside the exact amount a sign with that `amountIn` quotes at the same block
 * (support/book-beside-signs.ts). The exact amount is checked against the router independently by
 * firm-quote.devnet.test.ts; here the book is held to it:
 *
 * - never above it: the book rounds against the taker and the router's curve is concave (each
 *   tier pays less per unit than the one before), so a straight line between two of its points
 *   lies below it;
 * - at a ladder point, below it by rounding only, at most R = ⌈exact / 10^11⌉ + (levels + tiers +
 *   2) × w wei of the output: each level's price has 12 significant digits (within 1e-11 of the
 *   step's), and each level's pay (bids) or cost (asks) is rounded to a whole wei once, as the
 *   router and the walk each round a partial tier or level down. A wei rounded off a bid's pay is
 *   a wei of the output (w = 1); a wei added to an ask's cost is a wei of the input, worth at most
 *   ⌈exact / amountIn⌉ wei of the output at the margin (w = 1 + that: 3.4e8 wei of WETH for a
 *   micro-USDC on chain 8453, 1 on chain 56, whose USDT has 18 decimals);
 * - between two ladder points, below it by at most R + K, where K = ⌈Δ × (r_from − r_to) / 4⌉ is how
 *   far a straight line over the step (width Δ of input) can fall below a concave curve whose
 *   marginal rate (output per input) falls from r_from to r_to across the step: zero inside one
 *   tier, largest at a tier boundary in the middle of the step. The fee changes neither sign nor
 *   bound (netOfFee never widens a gap).
 *
 * A still chain: each chain mines only on a transaction, none is sent, and the indexers keep the
 * book of its last block (MAX_HEAD_LAG_MS, BOOK_TTL_MS raised), so every sign names the book's block.
 */
import { curveOut, curveTiers, type CurveSide, type RouterCurve } from '@pmm/contracts';
import { startSystem, until, type System } from '@pmm/testkit';
import { bookBesideSigns, type BookBesideSign, type SizeKind } from '../support/book-beside-signs';

jest.setTimeout(300_000);

const CHAINS = [8453, 56, 4663] as const;
const FEE = 30n;
/** Long enough for the whole sweep on a loaded machine: the book of the still chain's last block stays served. */
const STILL_MS = '1800000';

let sys: System;

beforeAll(async () => {
  sys = await startSystem({
    chains: [...CHAINS],
    blockIntervalMs: 0,
    env: {
      indexer: { MAX_HEAD_LAG_MS: STILL_MS, BOOK_TTL_MS: STILL_MS },
      // The deadlines are firm-quotes.test.ts's and the overload drill's subject; on a shared
      // 2-core machine they must not decide here.
      signer: { FIRM_QUOTE_DEADLINE_MS: '3000', MAX_SIGN_DEADLINE_MS: '3000' },
      gateway: { SIGN_DEADLINE_MS: '3000' },
    },
  });
});

afterAll(async () => {
  await sys?.stop();
});

const ceilDiv = (a: bigint, b: bigint) => (a + b - 1n) / b;

/** The marginal rate, output per input as num/den, of the tier that serves the input just after `amountIn` ('after') or up to it ('upTo'). */
function marginalRate(curve: RouterCurve, side: CurveSide, amountIn: bigint, edge: 'after' | 'upTo'): [bigint, bigint] {
  // The base depth reached: bids take base in, asks give base out.
  const depth = side === 'bid' ? amountIn : amountIn === 0n ? 0n : curveOut(curve, 'ask', amountIn);
  const tiers = curveTiers(curve, side);
  const tier =
    tiers.find((t) => (edge === 'after' ? depth < t.fromBase + t.capBase : depth <= t.fromBase + t.capBase)) ??
    tiers[tiers.length - 1]!;
  return side === 'bid' ? [tier.priceX18, 10n ** 18n] : [10n ** 18n, tier.priceX18];
}

/** R: the rounding bound (header). */
function roundingBound(row: BookBesideSign, curve: RouterCurve): bigint {
  const tiers = BigInt(curveTiers(curve, row.side).length);
  const perRounding = row.side === 'bid' ? 1n : 1n + ceilDiv(row.exact, row.amountIn);
  return ceilDiv(row.exact, 10n ** 11n) + (BigInt(row.levels) + tiers + 2n) * perRounding;
}

/** K: how far the straight line over the row's ladder step can fall below the curve (header). */
function stepBound(row: BookBesideSign, curve: RouterCurve): bigint {
  const [nf, df] = marginalRate(curve, row.side, row.step.from, 'after');
  const [nt, dt] = marginalRate(curve, row.side, row.step.to, 'upTo');
  const fall = nf * dt - nt * df;
  return fall <= 0n ? 0n : ceilDiv((row.step.to - row.step.from) * fall, 4n * df * dt);
}

describe.each(CHAINS)('chain %i: the book beside the firm quote', (chainId) => {
  it('behavior: every pair and side: at each ladder size the book offers, the sign quotes what it implies to rounding; between sizes, at most the step bound more, never less', async () => {
    await until(
      async () => {
        const res = await fetch(`${sys.gateway.url}/v2/price?chainId=${chainId}`, {
          headers: { 'x-api-key': sys.gateway.apiKey },
        });
        return res.status === 200;
      },
      60_000,
      `chain ${chainId}: a book`,
      100,
    );
    const c = sys.chain(chainId);
    const { rows, curves } = await bookBesideSigns({
      gatewayUrl: sys.gateway.url,
      apiKey: sys.gateway.apiKey,
      chain: c,
      fee: FEE,
    });

    // Every pair and side was compared at ladder points, midpoints and at least one tier boundary.
    for (const base of c.baseTokens)
      for (const side of ['ask', 'bid'] as const) {
        const kinds = new Set(
          rows.filter((r) => r.base.address === base.address && r.side === side).map((r) => r.kind),
        );
        expect([base.symbol, side, [...kinds].sort()]).toEqual([base.symbol, side, ['ladder', 'midpoint', 'tier']]);
      }

    const outside: string[] = [];
    for (const row of rows) {
      const curve = curves.get(row.base.address.toLowerCase())!;
      const gap = row.exact - row.implied;
      const bound = roundingBound(row, curve) + (row.kind === 'ladder' ? 0n : stepBound(row, curve));
      if (gap < 0n || gap > bound)
        outside.push(
          `${row.base.symbol} ${row.side} ${row.kind as SizeKind} ${row.amountIn}: exact ${row.exact}, book ${row.implied}, gap ${gap} (bound ${bound})`,
        );
    }
    expect(outside).toEqual([]);
    // The bound between ladder points is not slack: where a tier boundary splits a step, the book's
    // straight line departs from the curve by more than rounding.
    const kinked = rows.filter(
      (r) => r.kind === 'tier' && r.exact - r.implied > roundingBound(r, curves.get(r.base.address.toLowerCase())!),
    );
    expect(kinked.length).toBeGreaterThan(0);
  });
});
