import { netOfFee, slippageMinimum } from '../../src/signing/firm-quote';

describe('firm-quote arithmetic', () => {
  it('behavior: netOfFee rounds down as the router does (gross × (100000 − fee) / 100000)', () => {
    expect(netOfFee(1_000_000n, 0n)).toBe(1_000_000n);
    expect(netOfFee(1_000_000n, 30n)).toBe(999_700n);
    expect(netOfFee(99_999n, 1n)).toBe(99_998n); // 99998.00001 → 99998
    expect(netOfFee(7n, 10_000n)).toBe(6n); // 6.3 → 6
  });

  it('behavior: slippageMinimum is floor(amountOut × (10000 − bps) / 10000)', () => {
    expect(slippageMinimum(1_000_000n, 0)).toBe(1_000_000n);
    expect(slippageMinimum(1_000_000n, 50)).toBe(995_000n);
    expect(slippageMinimum(12_345n, 33)).toBe(12_304n); // 12304.26… → 12304
    expect(slippageMinimum(1_000_000n, 10_000)).toBe(0n);
  });
});
