/**
 * The bigint replica of the router's pricing, on hand-computed numbers. (Its agreement with the
 * Solidity router itself is pinned on a real EVM in packages/devnet/test/router.onchain.test.ts.)
 */
import { CurveError, assertValidCurve, curveOut, curveTiers, quoteOut, swapOut, type RouterCurve } from '../src';

// mid 2.5 quote raw per base raw; tiers of 10 and 20 base.
const curve: RouterCurve = {
  midPriceX18: 2_500_000_000_000_000_000n,
  askDepths: [10n, 30n],
  askSpreadsPpm: [100_000n, 200_000n], // ask prices 2.75, 3.0
  bidDepths: [10n, 30n],
  bidSpreadsPpm: [100_000n, 200_000n], // bid prices 2.25, 2.0
};

const errorName = (f: () => unknown): string => {
  try {
    f();
  } catch (err) {
    if (err instanceof CurveError) return err.errorName;
    throw err;
  }
  return 'no error';
};

describe('curveOut', () => {
  test('behavior: bids floor per tier (10 × 2.25 = 22.5 → 22, then 1 × 2.0)', () => {
    expect(curveOut(curve, 'bid', 10n)).toBe(22n);
    expect(curveOut(curve, 'bid', 11n)).toBe(24n);
    expect(curveOut(curve, 'bid', 30n)).toBe(22n + 40n);
  });

  test('behavior: asks charge ceil(cap × price) for a full tier and floor the partial one', () => {
    // Full first tier costs ceil(10 × 2.75) = 28 quote and yields 10 base.
    expect(curveOut(curve, 'ask', 28n)).toBe(10n);
    // 27 quote is not enough for the full tier: floor(27 / 2.75) = 9.
    expect(curveOut(curve, 'ask', 27n)).toBe(9n);
    // 28 + 5 quote: 10 base, then floor(5 / 3.0) = 1.
    expect(curveOut(curve, 'ask', 33n)).toBe(11n);
    expect(curveOut(curve, 'ask', 28n + 60n)).toBe(30n);
  });

  test('error: past the last tier is DepthExceeded, zero is ZeroAmount', () => {
    expect(errorName(() => curveOut(curve, 'bid', 31n))).toBe('DepthExceeded');
    expect(errorName(() => curveOut(curve, 'ask', 89n))).toBe('DepthExceeded');
    expect(errorName(() => curveOut(curve, 'bid', 0n))).toBe('ZeroAmount');
  });

  test('behavior: quoteOut adds the reserve check, swapOut the fee', () => {
    expect(quoteOut(curve, 'bid', 30n, 62n)).toBe(62n);
    expect(errorName(() => quoteOut(curve, 'bid', 30n, 61n))).toBe('InsufficientReserve');
    expect(swapOut(curve, 'bid', 30n, 10_000n)).toBe((62n * 90_000n) / 100_000n);
  });

  test('behavior: tiers are best price first with floored prices', () => {
    expect(curveTiers(curve, 'ask').map((t) => [t.fromBase, t.capBase, t.priceX18])).toEqual([
      [0n, 10n, 2_750_000_000_000_000_000n],
      [10n, 20n, 3_000_000_000_000_000_000n],
    ]);
    expect(curveTiers(curve, 'bid').map((t) => t.priceX18)).toEqual([
      2_250_000_000_000_000_000n,
      2_000_000_000_000_000_000n,
    ]);
  });

  test('error: assertValidCurve rejects what setCurve rejects', () => {
    expect(() => assertValidCurve(curve)).not.toThrow();
    expect(errorName(() => assertValidCurve({ ...curve, midPriceX18: 0n }))).toBe('InvalidCurve');
    expect(errorName(() => assertValidCurve({ ...curve, askDepths: [10n, 10n] }))).toBe('InvalidCurve');
    expect(errorName(() => assertValidCurve({ ...curve, bidSpreadsPpm: [1_000_000n, 1n] }))).toBe('InvalidCurve');
    expect(errorName(() => assertValidCurve({ ...curve, askSpreadsPpm: [1n] }))).toBe('InvalidCurve');
  });
});
