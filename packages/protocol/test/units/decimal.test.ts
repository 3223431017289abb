import fc from 'fast-check';
import { formatUnits as viemFormatUnits, parseUnits as viemParseUnits } from 'viem';
import {
  compareDecimals,
  formatRatio,
  formatUnits,
  parseDecimal,
  parseUnits,
  roundSignificant,
  scaleRatio,
} from '../../src/units/decimal';

describe('formatUnits', () => {
  it.each([
    [0n, 6, '0'],
    [0n, 0, '0'],
    [1n, 18, '0.000000000000000001'],
    [3000500000n, 6, '3000.5'],
    [10n ** 18n, 18, '1'],
    [123456789n, 0, '123456789'],
    [1200n, 2, '12'],
    [-1500n, 3, '-1.5'],
    [10n ** 40n, 6, '10000000000000000000000000000000000'],
  ])('behavior: %p with %p decimals is %p', (value, decimals, expected) => {
    expect(formatUnits(value, decimals)).toBe(expected);
  });

  it('behavior: agrees with viem for any value and decimals 0..36', () => {
    fc.assert(
      fc.property(
        fc.bigInt({ min: -(10n ** 80n), max: 10n ** 80n }),
        fc.integer({ min: 0, max: 36 }),
        (value, decimals) => {
          expect(formatUnits(value, decimals)).toBe(viemFormatUnits(value, decimals));
        },
      ),
      { numRuns: 500 },
    );
  });

  it('error: negative or fractional decimals', () => {
    expect(() => formatUnits(1n, -1)).toThrow(RangeError);
    expect(() => formatUnits(1n, 1.5)).toThrow(RangeError);
  });
});

describe('parseUnits', () => {
  it.each([
    ['3000.5', 6, 3000500000n],
    ['1', 18, 10n ** 18n],
    ['0.000000000000000001', 18, 1n],
    ['1.500', 1, 15n],
    ['-2.25', 2, -225n],
    ['0', 0, 0n],
  ])('behavior: %p with %p decimals is %p', (value, decimals, expected) => {
    expect(parseUnits(value, decimals)).toBe(expected);
  });

  it('behavior: inverts formatUnits and agrees with viem', () => {
    fc.assert(
      fc.property(
        fc.bigInt({ min: -(10n ** 80n), max: 10n ** 80n }),
        fc.integer({ min: 0, max: 36 }),
        (value, decimals) => {
          const text = formatUnits(value, decimals);
          expect(parseUnits(text, decimals)).toBe(value);
          expect(parseUnits(text, decimals)).toBe(viemParseUnits(text, decimals));
        },
      ),
      { numRuns: 500 },
    );
  });

  it('error: more places than decimals is never rounded', () => {
    expect(() => parseUnits('0.0000001', 6)).toThrow('0.0000001 has more than 6 decimal places');
  });

  it.each(['', '1.', '.5', '1e3', '+1', ' 1', '0x1', '1,5'])('error: malformed %p', (value) => {
    expect(() => parseUnits(value, 6)).toThrow(RangeError);
  });
});

describe('formatRatio', () => {
  it.each([
    [1n, 3n, 6, 'down', '0.333333'],
    [1n, 3n, 6, 'up', '0.333334'],
    [2n, 3n, 0, 'down', '0'],
    [2n, 3n, 0, 'up', '1'],
    [6001n, 2n, 18, 'up', '3000.5'],
    [6001n, 2n, 18, 'down', '3000.5'],
    [0n, 7n, 18, 'up', '0'],
    [10n, 4n, 1, 'down', '2.5'],
  ] as const)('behavior: %p / %p at %p places rounded %s is %p', (n, d, places, rounding, expected) => {
    expect(formatRatio(n, d, places, rounding)).toBe(expected);
  });

  it('behavior: down is the largest value ≤ the ratio and up the smallest ≥ it, one unit apart unless exact', () => {
    fc.assert(
      fc.property(
        fc.bigInt({ min: 0n, max: 10n ** 50n }),
        fc.bigInt({ min: 1n, max: 10n ** 40n }),
        fc.integer({ min: 0, max: 30 }),
        (n, d, places) => {
          const unit = 10n ** BigInt(places);
          const down = parseUnits(formatRatio(n, d, places, 'down'), places);
          const up = parseUnits(formatRatio(n, d, places, 'up'), places);
          // down/unit ≤ n/d < (down+1)/unit, cross-multiplied to stay in integers
          expect(down * d <= n * unit && n * unit < (down + 1n) * d).toBe(true);
          expect((up - 1n) * d < n * unit && n * unit <= up * d).toBe(true);
          expect(up - down).toBe((n * unit) % d === 0n ? 0n : 1n);
          expect(scaleRatio(n, d, places, 'down')).toBe(down);
        },
      ),
      { numRuns: 500 },
    );
  });

  it('error: zero denominator or negative numerator', () => {
    expect(() => formatRatio(1n, 0n, 2, 'down')).toThrow('denominator must be positive');
    expect(() => formatRatio(-1n, 2n, 2, 'down')).toThrow('numerator must be non-negative');
  });
});

describe('roundSignificant', () => {
  it.each([
    [30015n, 10n, 3, 'up', 3010n, 0],
    [30015n, 10n, 3, 'down', 3000n, 0],
    [10n, 3n, 4, 'up', 3334n, 3],
    [10n, 3n, 4, 'down', 3333n, 3],
    [1n, 8n, 12, 'down', 125000000000n, 12],
    [999999n, 1000n, 3, 'up', 1000n, 0],
    [0n, 7n, 5, 'up', 0n, 0],
    [1n, 10n ** 40n, 2, 'down', 10n, 41],
  ] as const)('behavior: %s / %s to %s digits %s is %s × 10^-%s', (n, d, digits, rounding, units, scale) => {
    expect(roundSignificant(n, d, digits, rounding)).toEqual({ units, scale });
  });

  it('property: the result has at most `digits` significant digits and is the nearest such value on its side', () => {
    fc.assert(
      fc.property(
        fc.bigInt({ min: 0n, max: 10n ** 40n }),
        fc.bigInt({ min: 1n, max: 10n ** 40n }),
        fc.integer({ min: 1, max: 20 }),
        (n, d, digits) => {
          const down = roundSignificant(n, d, digits, 'down');
          const up = roundSignificant(n, d, digits, 'up');
          for (const r of [down, up]) {
            const significant = r.units.toString().replace(/0+$/, '');
            expect(r.units === 0n || significant.length <= digits).toBe(true);
          }
          // down ≤ n/d ≤ up, and they are one unit in the last kept digit apart, or equal when exact
          const scale = 10n ** BigInt(Math.max(down.scale, up.scale));
          const lo = (down.units * scale) / 10n ** BigInt(down.scale);
          const hi = (up.units * scale) / 10n ** BigInt(up.scale);
          expect(lo * d <= n * scale && n * scale <= hi * d).toBe(true);
          if (lo * d === n * scale) expect(hi).toBe(lo);
          else if (n > 0n) {
            // the gap is the unit of the last kept digit of the smaller value's magnitude, or a power of ten
            const gap = hi - lo;
            expect(gap > 0n && /^10*$/.test(gap.toString())).toBe(true);
          }
        },
      ),
      { numRuns: 500 },
    );
  });

  it('error: digits below 1, a non-positive denominator, a negative numerator', () => {
    expect(() => roundSignificant(1n, 1n, 0, 'up')).toThrow(RangeError);
    expect(() => roundSignificant(1n, 0n, 3, 'up')).toThrow(RangeError);
    expect(() => roundSignificant(-1n, 1n, 3, 'up')).toThrow(RangeError);
  });
});

describe('compareDecimals and parseDecimal', () => {
  it('behavior: compares across scales', () => {
    expect(compareDecimals(parseDecimal('1.50'), { units: 15n, scale: 1 })).toBe(0);
    expect(compareDecimals(parseDecimal('2'), parseDecimal('1.999999999999999999999'))).toBe(1);
    expect(compareDecimals(parseDecimal('0.000001'), parseDecimal('0.00001'))).toBe(-1);
  });

  it('behavior: parseDecimal keeps only the places it needs', () => {
    expect(parseDecimal('3001.500')).toEqual({ units: 30015n, scale: 1 });
    expect(parseDecimal('42')).toEqual({ units: 42n, scale: 0 });
  });
});
