import fc from 'fast-check';
import { compareDecimals, parseDecimal, parseUnits } from '../../src/units/decimal';
import {
  levelsFromSamples,
  summarizeLevels,
  type BookSide,
  type QuoteSample,
} from '../../src/orderbook/orderbook-levels';

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
    expect(levelsFromSamples('ask', [s(10n * E6, 3n * E18)], 18, 6)).toEqual([{ price: '3.33333333334', amount: '3' }]);
    expect(levelsFromSamples('bid', [s(3n * E18, 10n * E6)], 18, 6)).toEqual([{ price: '3.33333333333', amount: '3' }]);
  });

  it('behavior: prices carry 12 significant digits, whatever their magnitude', () => {
    // 1 WETH for 3001.499999999999988786 USDC-like steps: the noise of integer-rounded samples goes
    expect(levelsFromSamples('ask', [s(3001_499999999999988786n, E18)], 18, 18)).toEqual([
      { price: '3001.5', amount: '1' },
    ]);
    expect(levelsFromSamples('bid', [s(3n * E18, 10n * E18 * 10n ** 15n)], 18, 18)).toEqual([
      { price: '3333333333330000', amount: '3' },
    ]);
    expect(levelsFromSamples('bid', [s(3n * 10n ** 30n, 10n)], 18, 18)).toEqual([
      { price: `0.${'0'.repeat(29)}333333333333`, amount: '3000000000000' },
    ]);
  });

  it('behavior: priceDigits sets the significant digits', () => {
    expect(levelsFromSamples('ask', [s(10n * E6, 3n * E18)], 18, 6, { priceDigits: 3 })).toEqual([
      { price: '3.34', amount: '3' },
    ]);
    expect(levelsFromSamples('bid', [s(3n * E18, 10n * E6)], 18, 6, { priceDigits: 1 })).toEqual([
      { price: '3', amount: '3' },
    ]);
    expect(levelsFromSamples('ask', [s(99999n * E6, E18)], 18, 6, { priceDigits: 2 })).toEqual([
      { price: '100000', amount: '1' },
    ]);
  });

  it('behavior: adjacent levels whose rounded prices are equal are merged', () => {
    // 2998.500000750000056296 three times in a row (the devnet's WETH bids before this rule)
    const step = 2998_500000750000056296n;
    const bids = [s(E18, step), s(2n * E18, 2n * step), s(3n * E18, 3n * step), s(4n * E18, 3n * step + 2990n * E18)];
    expect(levelsFromSamples('bid', bids, 18, 18)).toEqual([
      { price: '2998.50000075', amount: '3' },
      { price: '2990', amount: '1' },
    ]);
    // different exact prices that round to the same 12 digits merge too
    const asks = [s(30000000000001n * 10n ** 8n, E18), s(60000000000003n * 10n ** 8n, 2n * E18)];
    expect(levelsFromSamples('ask', asks, 18, 18)).toEqual([{ price: '3000.00000001', amount: '2' }]);
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

  it('behavior: a step that is no worse than the level before it joins that level (never shown ahead of it)', () => {
    // ladder with the worse step first (not convex): the taker must pay the dear step to reach
    // the cheap ones, so they form one level at the average price
    const ask = [s(2n, 1n), s(3n, 2n), s(5n, 4n), s(7n, 5n)]; // steps (quote/base): 2/1, 1/1, 2/2, 2/1
    expect(levelsFromSamples('ask', ask, 0, 0)).toEqual([
      { price: '1.25', amount: '4' },
      { price: '2', amount: '1' },
    ]);
    const bid = [s(1n, 1n), s(2n, 3n), s(4n, 7n), s(6n, 8n)]; // steps (quote/base): 1/1, 2/1, 4/2, 1/2
    expect(levelsFromSamples('bid', bid, 0, 0)).toEqual([
      { price: '1.75', amount: '4' },
      { price: '0.5', amount: '2' },
    ]);
  });

  it('behavior: duplicate samples (zero steps) are dropped', () => {
    expect(levelsFromSamples('ask', [s(10n, 5n), s(10n, 5n), s(20n, 11n)], 0, 0)).toEqual([
      { price: '1.81818181819', amount: '11' },
    ]);
    expect(levelsFromSamples('ask', [s(10n, 5n), s(10n, 5n), s(30n, 10n)], 0, 0)).toEqual([
      { price: '2', amount: '5' },
      { price: '4', amount: '5' },
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
    expect(() => levelsFromSamples('ask', [], 18, 6, { priceDigits: 0 })).toThrow(RangeError);
    expect(() => levelsFromSamples('ask', [], 18, 6, { priceDigits: 1.5 })).toThrow(RangeError);
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
const PRICE_DIGITS = fc.constantFrom(1, 3, 12, 30);

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

/** The ladder points as (base, quote), for those that gave the taker more output. */
function productivePoints(side: BookSide, samples: readonly QuoteSample[]): { base: bigint; quote: bigint }[] {
  let prevOut = 0n;
  const points: { base: bigint; quote: bigint }[] = [];
  for (const sample of samples) {
    if (sample.amountOut > prevOut)
      points.push(
        side === 'ask'
          ? { base: sample.amountOut, quote: sample.amountIn }
          : { base: sample.amountIn, quote: sample.amountOut },
      );
    prevOut = sample.amountOut;
  }
  return points;
}

/**
 * INVARIANT of levelsFromSamples: every prefix of levels sums to a ladder point's base, and its
 * cost is that point's quote, rounded against the taker by less than 10^(1 − digits) of it.
 */
function checkEveryPrefix(
  side: BookSide,
  samples: QuoteSample[],
  baseDecimals: number,
  quoteDecimals: number,
  priceDigits: number,
): void {
  const levels = levelsFromSamples(side, samples, baseDecimals, quoteDecimals, { priceDigits });
  const points = productivePoints(side, samples);
  for (let k = 1; k <= levels.length; k++) {
    const summary = summarizeLevels(levels.slice(0, k), baseDecimals, quoteDecimals);
    const point = points.find((p) => p.base === summary.base);
    expect(point).toBeDefined();
    // Exact Σ price·amount (raw quote) = N / D, compared with the point's quote q:
    // asks q ≤ N/D < q·(1 + 10^(1−digits)), bids q·(1 − 10^(1−digits)) < N/D ≤ q.
    const exact = point!.quote * summary.quoteDenominator;
    const slack = (exact * 10n) / 10n ** BigInt(priceDigits);
    if (side === 'ask') {
      expect(summary.quoteNumerator >= exact).toBe(true);
      expect(summary.quoteNumerator - exact <= slack).toBe(true);
    } else {
      expect(summary.quoteNumerator <= exact).toBe(true);
      expect(exact - summary.quoteNumerator <= slack).toBe(true);
    }
  }
  // The whole side reaches the last point that gave the taker something.
  const last = points[points.length - 1];
  expect(summarizeLevels(levels, baseDecimals, quoteDecimals).base).toBe(last?.base ?? 0n);
}

describe('levelsFromSamples: properties', () => {
  it('property: every prefix of levels ends on a ladder point and never promises more than it (12 digits: within 1e-11)', () => {
    fc.assert(
      fc.property(
        fc.constantFrom<BookSide>('bid', 'ask'),
        ladder,
        DECIMALS,
        DECIMALS,
        PRICE_DIGITS,
        (side, samples, bd, qd, digits) => {
          checkEveryPrefix(side, samples, bd, qd, digits);
        },
      ),
      { numRuns: 600 },
    );
  });

  it('property: strictly best first (no two adjacent levels at one price), and no level of zero amount', () => {
    fc.assert(
      fc.property(fc.constantFrom<BookSide>('bid', 'ask'), ladder, DECIMALS, DECIMALS, (side, samples, bd, qd) => {
        const levels = levelsFromSamples(side, samples, bd, qd);
        const prices = levels.map((l) => parseDecimal(l.price));
        for (let i = 1; i < prices.length; i++)
          expect(compareDecimals(prices[i - 1]!, prices[i]!)).toBe(side === 'bid' ? 1 : -1);
        for (const level of levels) expect(parseUnits(level.amount, bd) > 0n).toBe(true);
      }),
      { numRuns: 300 },
    );
  });

  it('property: prices have at most the requested significant digits', () => {
    fc.assert(
      fc.property(
        fc.constantFrom<BookSide>('bid', 'ask'),
        ladder,
        DECIMALS,
        DECIMALS,
        PRICE_DIGITS,
        (side, samples, bd, qd, digits) => {
          for (const level of levelsFromSamples(side, samples, bd, qd, { priceDigits: digits }))
            expect(level.price.replace('.', '').replace(/^0+/, '').replace(/0+$/, '').length).toBeLessThanOrEqual(
              digits,
            );
        },
      ),
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
