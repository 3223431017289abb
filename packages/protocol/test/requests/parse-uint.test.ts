import fc from 'fast-check';
import { ApiError } from '../../src/errors/api-error';
import { UINT256_MAX, parseUintString } from '../../src/requests/parse-uint';

function message(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    if (err instanceof ApiError && err.code === 'VALIDATION_ERROR' && err.status === 422) return err.message;
    throw err;
  }
  throw new Error('expected a VALIDATION_ERROR, nothing was thrown');
}

const FULL = { min: 0n, max: UINT256_MAX };
const FORMAT = 'amountIn: must be a canonical base-10 integer string (digits only, no sign, no leading zeros)';

describe('parseUintString', () => {
  it('default: UINT256_MAX is 2^256 - 1', () => {
    expect(UINT256_MAX).toBe(115792089237316195423570985008687907853269984665640564039457584007913129639935n);
  });

  it.each([
    ['0', 0n],
    ['1', 1n],
    ['10', 10n],
    [UINT256_MAX.toString(), UINT256_MAX],
  ])('behavior: %s parses exactly', (value, expected) => {
    expect(parseUintString('amountIn', value, FULL)).toBe(expected);
  });

  it.each(['010', '00', '+1', '-1', ' 1', '1 ', '1e3', '1.0', '1.', '0x10', '', '１', '1_000', '1,000', '1\n'])(
    'error: non-canonical %p',
    (value) => {
      expect(message(() => parseUintString('amountIn', value, FULL))).toBe(FORMAT);
    },
  );

  it.each([[1], [1n], [null], [true], [['1']], [undefined]])('error: non-string %p', (value) => {
    expect(message(() => parseUintString('amountIn', value, FULL))).toBe('amountIn: must be a string');
  });

  it('error: out of range names the range, with 2^256-1 spelled short', () => {
    expect(message(() => parseUintString('amountIn', '0', { min: 1n, max: UINT256_MAX }))).toBe(
      'amountIn: must be between 1 and 2^256-1',
    );
    expect(message(() => parseUintString('amountIn', (UINT256_MAX + 1n).toString(), FULL))).toBe(
      'amountIn: must be between 0 and 2^256-1',
    );
    expect(message(() => parseUintString('fee', '10001', { min: 0n, max: 10000n }))).toBe(
      'fee: must be between 0 and 10000',
    );
  });

  it('behavior: bounds are inclusive', () => {
    expect(parseUintString('x', '5', { min: 5n, max: 7n })).toBe(5n);
    expect(parseUintString('x', '7', { min: 5n, max: 7n })).toBe(7n);
    expect(() => parseUintString('x', '4', { min: 5n, max: 7n })).toThrow('x: must be between 5 and 7');
    expect(() => parseUintString('x', '8', { min: 5n, max: 7n })).toThrow('x: must be between 5 and 7');
  });

  it('behavior: a very long digit string is out of range, not a crash', () => {
    expect(message(() => parseUintString('amountIn', '9'.repeat(20_000), FULL))).toBe(
      'amountIn: must be between 0 and 2^256-1',
    );
  });

  it('behavior: round-trips every uint256 through its decimal string', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: UINT256_MAX }), (n) => {
        expect(parseUintString('v', n.toString(), FULL)).toBe(n);
      }),
    );
  });

  it('behavior: any string with a leading zero before another digit is rejected', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: UINT256_MAX }), fc.integer({ min: 1, max: 3 }), (n, zeros) => {
        expect(() => parseUintString('v', '0'.repeat(zeros) + n.toString(), FULL)).toThrow(ApiError);
      }),
    );
  });
});
