import fc from 'fast-check';
import { parseUnits } from '../src/decimal';
import { levelsFromSamples, summarizeLevels, type BookSide, type QuoteSample } from '../src/orderbook-levels';

const E18 = 10n ** 18n;
const E6 = 10n ** 6n;
const s = (amountIn: bigint, amountOut: bigint): QuoteSample => ({ amountIn, amountOut });

describe('levelsFromSamples: hand-computed examples', () => {
  it('behavior: WETH/USDC ask, 1 WETH for 3000.5 USDC', () => {
    expect(levelsFromSamples('ask', [s(3000_500000n, E18)], 18, 6)).toEqual([{ price: '3000.5', amount: '1' }]);
  });

  it('behavior: WETH/USDC bid ladder, marginal steps', () => {
    const samples = [s(E18, 2999_500000n), s(3n * E18, 2999_500000n + 2n * 2990n * E6)];
    expect(levelsFromSamples('bid', samples, 18, 6)).toEqual([
      { price: '2999.5', amount: '1' },
      { price: '2990', amount: '2' },
    ]);
  });

  it('behavior: an inexact price is rounded against the taker (asks up, bids down)', () => {
    // 3 base (18 dec) for 10 quote (6 dec): 3.333… quote per base
    expect(levelsFromSamples('ask', [s(10n * E6, 3n * E18)], 18, 6)).toEqual([
      { price: '3.333333333333333334', amount: '3' },
    ]);
    expect(levelsFromSamples('bid', [s(3n * E18, 10n * E6)], 18, 6)).toEqual([
      { price: '3.333333333333333333', amount: '3' },
    ]);
  });

  it('behavior: priceDecimals sets the price precision', () => {
    expect(levelsFromSamples('ask', [s(10n * E6, 3n * E18)], 18, 6, { priceDecimals: 2 })).toEqual([
      { price: '3.34', amount: '3' },
    ]);
    expect(levelsFromSamples('bid', [s(3n * E18, 10n * E6)], 18, 6, { priceDecimals: 0 })).toEqual([
      { price: '3', amount: '3' },
    ]);
  });

  it('behavior: WBTC (8) / USDC (6) on both sides', () => {
    expect(levelsFromSamples('ask', [s(60000_123456n, 10n ** 8n)], 8, 6)).toEqual([
      { price: '60000.123456', amount: '1' },
    ]);
    expect(levelsFromSamples('bid', [s(5n * 10n ** 7n, 30000n * E6)], 8, 6)).toEqual([
      { price: '60000', amount: '0.5' },
    ]);
  });

  it('behavior: 18-decimal base and 18-decimal quote (USDT on chain 56)', () => {
    expect(levelsFromSamples('bid', [s(2n * E18, 5n * E18)], 18, 18)).toEqual([{ price: '2.5', amount: '2' }]);
    expect(levelsFromSamples('ask', [s(600n * E18, 1n * E18), s(1201n * E18, 2n * E18)], 18, 18)).toEqual([
      { price: '600', amount: '1' },
      { price: '601', amount: '1' },
    ]);
  });

  it('behavior: sorted best first (asks ascending, bids descending), stable for equal prices', () => {
    // ladder with the worse step first (not convex): sorting moves it back
    const ask = [s(2n, 1n), s(3n, 2n), s(5n, 4n), s(7n, 5n)]; // steps: 2/1, 1/1, 2/2, 2/1
    expect(levelsFromSamples('ask', ask, 0, 0)).toEqual([
      { price: '1', amount: '1' },
      { price: '1', amount: '2' },
      { price: '2', amount: '1' },
      { price: '2', amount: '1' },
    ]);
    const bid = [s(1n, 1n), s(2n, 3n), s(4n, 7n), s(6n, 8n)]; // steps: 1/1, 2/1, 4/2, 1/2
    expect(levelsFromSamples('bid', bid, 0, 0)).toEqual([
      { price: '2', amount: '1' },
      { price: '2', amount: '2' },
      { price: '1', amount: '1' },
      { price: '0.5', amount: '2' },
    ]);
  });

  it('behavior: duplicate samples (zero steps) are dropped', () => {
    expect(levelsFromSamples('ask', [s(10n, 5n), s(10n, 5n), s(20n, 10n)], 0, 0)).toEqual([
      { price: '2', amount: '5' },
      { price: '2', amount: '5' },
    ]);
  });

  it('behavior: an ask step that gives no base carries its quote into the next level', () => {
    expect(levelsFromSamples('ask', [s(100n, 0n), s(200n, 1n)], 0, 0)).toEqual([{ price: '200', amount: '1' }]);
  });

  it('behavior: a bid step that pays no quote carries its base into the next level (no zero-price bid)', () => {
    expect(levelsFromSamples('bid', [s(100n, 0n), s(200n, 50n)], 0, 0)).toEqual([{ price: '0.25', amount: '200' }]);
  });

  it('behavior: trailing steps that give the taker nothing are dropped', () => {
    expect(levelsFromSamples('ask', [s(100n, 1n), s(200n, 1n)], 0, 0)).toEqual([{ price: '100', amount: '1' }]);
    expect(levelsFromSamples('bid', [s(100n, 50n), s(200n, 50n)], 0, 0)).toEqual([{ price: '0.5', amount: '100' }]);
  });

  it('behavior: a non-monotonic ladder stops before the first offending sample, without throwing', () => {
    const first = [{ price: '0.1', amount: '100' }];
    expect(levelsFromSamples('bid', [s(100n, 10n), s(200n, 5n), s(300n, 30n)], 0, 0)).toEqual(first); // output decreases
    expect(levelsFromSamples('bid', [s(100n, 10n), s(50n, 20n), s(300n, 30n)], 0, 0)).toEqual(first); // input decreases
    expect(levelsFromSamples('bid', [s(100n, 10n), s(100n, 20n), s(300n, 30n)], 0, 0)).toEqual(first); // more for the same input
  });

  it('default: no samples, no levels', () => {
    expect(levelsFromSamples('ask', [], 18, 6)).toEqual([]);
    expect(levelsFromSamples('bid', [s(0n, 0n)], 18, 6)).toEqual([]);
  });

  it('error: invalid decimals', () => {
    expect(() => levelsFromSamples('ask', [], -1, 6)).toThrow(RangeError);
    expect(() => levelsFromSamples('ask', [], 18, 6, { priceDecimals: 1.5 })).toThrow(RangeError);
  });
});

describe('summarizeLevels', () => {
  it('behavior: sums amounts to raw base and price × amount to raw quote', () => {
    const summary = summarizeLevels(
      [
        { price: '3000.5', amount: '1' },
        { price: '3.333333333333333334', amount: '3' },
      ],
      18,
      6,
    );
    expect(summary.base).toBe(4n * E18);
    // 3000.5 + 10.000000000000000002 = 3010.500000000000000002 USDC = 3010500000000000000002 / 10^12 raw
    expect(summary.quoteFloor).toBe(3010_500000n);
    expect(summary.quoteCeil).toBe(3010_500001n);
    expect(summary.quoteNumerator * 10n ** 12n).toBe(3010500000000000000002n * summary.quoteDenominator);
  });
});

// ---- properties -------------------------------------------------------------------------------

const DECIMALS = fc.constantFrom(0, 6, 8, 18);
const PRICE_DECIMALS = fc.constantFrom(0, 6, 18);

/** A monotonic ladder: each step adds ≥ 0 input and ≥ 0 output, and no output without input. */
const ladder = fc
  .array(
    fc.record({
      dIn: fc.oneof(fc.constant(0n), fc.bigInt({ min: 1n, max: 10n ** 30n })),
      dOut: fc.oneof(fc.constant(0n), fc.bigInt({ min: 1n, max: 10n ** 30n })),
    }),
    { maxLength: 12 },
  )
  .map((steps) => {
    let amountIn = 0n;
    let amountOut = 0n;
    return steps.map(({ dIn, dOut }) => {
      amountIn += dIn;
      amountOut += dIn === 0n ? 0n : dOut;
      return s(amountIn, amountOut);
    });
  });

/** The sample the levels must reproduce: the last one that gave the taker more output. */
function lastProductive(samples: readonly QuoteSample[]): QuoteSample {
  let prevOut = 0n;
  let last = s(0n, 0n);
  for (const sample of samples) {
    if (sample.amountOut > prevOut) last = sample;
    prevOut = sample.amountOut;
  }
  return last;
}

function checkAgainstLadder(
  side: BookSide,
  samples: QuoteSample[],
  baseDecimals: number,
  quoteDecimals: number,
  priceDecimals: number,
): void {
  const levels = levelsFromSamples(side, samples, baseDecimals, quoteDecimals, { priceDecimals });
  const summary = summarizeLevels(levels, baseDecimals, quoteDecimals, { priceDecimals });
  const target = lastProductive(samples);
  const base = side === 'ask' ? target.amountOut : target.amountIn;
  const quote = side === 'ask' ? target.amountIn : target.amountOut;
  expect(summary.base).toBe(base);
  // Exact Σ price·amount (raw quote) = N / D; the rounding of each price is < 10^-priceDecimals,
  // so the total is off by less than base·10^quoteDecimals / D, in the taker's disfavour.
  const exactTimesD = quote * summary.quoteDenominator;
  const slack = base * 10n ** BigInt(quoteDecimals);
  if (side === 'ask') {
    expect(summary.quoteNumerator >= exactTimesD).toBe(true);
    expect(summary.quoteNumerator - exactTimesD <= slack).toBe(true);
  } else {
    expect(summary.quoteNumerator <= exactTimesD).toBe(true);
    expect(exactTimesD - summary.quoteNumerator <= slack).toBe(true);
  }
}

describe('levelsFromSamples: properties', () => {
  it('property: amounts sum to the base of the last sample; Σ price·amount brackets its quote against the taker', () => {
    fc.assert(
      fc.property(
        fc.constantFrom<BookSide>('bid', 'ask'),
        ladder,
        DECIMALS,
        DECIMALS,
        PRICE_DECIMALS,
        (side, samples, bd, qd, pd) => {
          checkAgainstLadder(side, samples, bd, qd, pd);
        },
      ),
      { numRuns: 400 },
    );
  });

  it('property: with every step productive, the sum is exactly the last sample (18/6, 8/6, 18/18, 6/18)', () => {
    const strict = fc
      .array(
        fc.record({ dIn: fc.bigInt({ min: 1n, max: 10n ** 27n }), dOut: fc.bigInt({ min: 1n, max: 10n ** 27n }) }),
        { minLength: 1, maxLength: 10 },
      )
      .map((steps) => {
        let amountIn = 0n;
        let amountOut = 0n;
        return steps.map(({ dIn, dOut }) => s((amountIn += dIn), (amountOut += dOut)));
      });
    const pairs = fc.constantFrom([18, 6], [8, 6], [18, 18], [6, 18]);
    fc.assert(
      fc.property(fc.constantFrom<BookSide>('bid', 'ask'), strict, pairs, (side, samples, [bd, qd]) => {
        const last = samples[samples.length - 1]!;
        const levels = levelsFromSamples(side, samples, bd!, qd!);
        expect(levels).toHaveLength(samples.length);
        expect(summarizeLevels(levels, bd!, qd!).base).toBe(side === 'ask' ? last.amountOut : last.amountIn);
      }),
      { numRuns: 300 },
    );
  });

  it('property: every ladder point is reproduced by the levels of the ladder up to it', () => {
    fc.assert(
      fc.property(fc.constantFrom<BookSide>('bid', 'ask'), ladder, DECIMALS, DECIMALS, (side, samples, bd, qd) => {
        for (let k = 0; k <= samples.length; k++) checkAgainstLadder(side, samples.slice(0, k), bd, qd, 18);
      }),
      { numRuns: 100 },
    );
  });

  it('property: sorted best first, and no level of zero amount', () => {
    fc.assert(
      fc.property(fc.constantFrom<BookSide>('bid', 'ask'), ladder, DECIMALS, DECIMALS, (side, samples, bd, qd) => {
        const levels = levelsFromSamples(side, samples, bd, qd);
        const prices = levels.map((l) => parseUnits(l.price, 18));
        for (let i = 1; i < prices.length; i++) {
          expect(side === 'bid' ? prices[i - 1]! >= prices[i]! : prices[i - 1]! <= prices[i]!).toBe(true);
        }
        for (const level of levels) expect(parseUnits(level.amount, bd) > 0n).toBe(true);
      }),
      { numRuns: 300 },
    );
  });

  it('property: samples after a decreasing output change nothing', () => {
    fc.assert(
      fc.property(
        fc.constantFrom<BookSide>('bid', 'ask'),
        ladder.filter((l) => l.length > 0 && l[l.length - 1]!.amountOut > 0n),
        ladder,
        fc.bigInt({ min: 1n, max: 10n ** 20n }),
        (side, samples, tail, drop) => {
          const last = samples[samples.length - 1]!;
          const bad = s(last.amountIn + 1n, last.amountOut - (drop > last.amountOut ? last.amountOut : drop));
          const after = tail.map((t) => s(t.amountIn + bad.amountIn, t.amountOut + last.amountOut));
          expect(levelsFromSamples(side, [...samples, bad, ...after], 18, 6)).toEqual(
            levelsFromSamples(side, samples, 18, 6),
          );
        },
      ),
      { numRuns: 200 },
    );
  });
});
