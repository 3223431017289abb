import { ApiError } from '../../src/errors/api-error';
import { DEFAULT_MAX_FEE, parseFee } from '../../src/requests/parse-fee';

function message(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    if (err instanceof ApiError && err.code === 'VALIDATION_ERROR' && err.status === 422) return err.message;
    throw err;
  }
  throw new Error('expected a VALIDATION_ERROR, nothing was thrown');
}

describe('parseFee', () => {
  it('default: the maximum is 10000 (10%)', () => {
    expect(DEFAULT_MAX_FEE).toBe(10000n);
    expect(parseFee('10000')).toBe(10000n);
    expect(message(() => parseFee('10001'))).toBe('fee: must be between 0 and 10000');
  });

  it('behavior: 0 and the spec table values are accepted', () => {
    expect(['0', '1', '10', '30', '100', '3000'].map((v) => parseFee(v))).toEqual([0n, 1n, 10n, 30n, 100n, 3000n]);
  });

  it('behavior: a deployment limit replaces the default', () => {
    expect(parseFee('500', 500n)).toBe(500n);
    expect(message(() => parseFee('501', 500n))).toBe('fee: must be between 0 and 500');
  });

  it.each(['010', '+1', ' 1', '1e3', '-0', '1.5', ''])('error: non-canonical %p', (value) => {
    expect(message(() => parseFee(value))).toBe(
      'fee: must be a canonical base-10 integer string (digits only, no sign, no leading zeros)',
    );
  });

  it('error: a JSON number is not accepted', () => {
    expect(message(() => parseFee(30))).toBe('fee: must be a string');
  });
});
