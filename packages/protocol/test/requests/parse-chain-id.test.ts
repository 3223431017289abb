import { ApiError } from '../../src/errors/api-error';
import {
  OUT_OF_RANGE_CHAIN_ID,
  assertServedChain,
  chainIdFromBody,
  chainIdFromQuery,
} from '../../src/requests/parse-chain-id';

function caught(fn: () => unknown): { code: string; status: number; message: string } {
  try {
    fn();
  } catch (err) {
    if (err instanceof ApiError) return { code: err.code, status: err.status, message: err.message };
    throw err;
  }
  throw new Error('expected an ApiError, nothing was thrown');
}

const v422 = (message: string) => ({ code: 'VALIDATION_ERROR', status: 422, message });
const SERVED = [8453, 56, 4663] as const;

describe('chainIdFromBody', () => {
  it('default: omitted and 0 mean 8453', () => {
    expect(chainIdFromBody(undefined)).toBe(8453);
    expect(chainIdFromBody(0)).toBe(8453);
    expect(chainIdFromBody(-0)).toBe(8453);
  });

  it('behavior: a non-negative integer is returned as is, served or not', () => {
    expect(chainIdFromBody(56)).toBe(56);
    expect(chainIdFromBody(1)).toBe(1);
    expect(chainIdFromBody(1e3)).toBe(1000);
  });

  it('behavior: an integer above 2^53 is well-formed and maps to the unserved OUT_OF_RANGE_CHAIN_ID', () => {
    expect(chainIdFromBody(1e20)).toBe(OUT_OF_RANGE_CHAIN_ID);
    expect(chainIdFromBody(Number.MAX_SAFE_INTEGER + 1)).toBe(OUT_OF_RANGE_CHAIN_ID);
  });

  it.each([['56'], [1.5], [null], [true], [{}], [[56]], [Number.NaN], [Number.POSITIVE_INFINITY]])(
    'error: %p is not an integer',
    (value) => {
      expect(caught(() => chainIdFromBody(value))).toEqual(v422('chainId: must be an integer'));
    },
  );

  it('error: negative', () => {
    expect(caught(() => chainIdFromBody(-1))).toEqual(v422('chainId: must be a non-negative integer'));
  });
});

describe('chainIdFromQuery', () => {
  it('default: omitted, "0" and "000" mean 8453', () => {
    expect(chainIdFromQuery(undefined)).toBe(8453);
    expect(chainIdFromQuery('0')).toBe(8453);
    expect(chainIdFromQuery('000')).toBe(8453);
  });

  it('behavior: digits, leading zeros allowed', () => {
    expect(chainIdFromQuery('56')).toBe(56);
    expect(chainIdFromQuery('0056')).toBe(56);
    expect(chainIdFromQuery('1')).toBe(1);
  });

  it('behavior: a huge digit string is well-formed, never throws, and is unserved', () => {
    expect(chainIdFromQuery('9007199254740991')).toBe(Number.MAX_SAFE_INTEGER);
    expect(chainIdFromQuery('9007199254740992')).toBe(OUT_OF_RANGE_CHAIN_ID);
    expect(chainIdFromQuery('99999999999999999999')).toBe(OUT_OF_RANGE_CHAIN_ID);
    expect(chainIdFromQuery('9'.repeat(10_000))).toBe(OUT_OF_RANGE_CHAIN_ID);
    expect(chainIdFromQuery(`${'0'.repeat(100)}56`)).toBe(56);
    expect(caught(() => assertServedChain(chainIdFromQuery('9'.repeat(400)), SERVED))).toEqual({
      code: 'UNSUPPORTED_CHAIN',
      status: 400,
      message: 'chainId: too large, not served (served: 8453, 56, 4663)',
    });
  });

  it('error: empty value', () => {
    expect(caught(() => chainIdFromQuery(''))).toEqual(v422('chainId: must not be empty'));
  });

  it.each(['+56', '-1', ' 56', '56 ', '5 6', '0x38', '56a', 'abc', '1.0', '1e3', '５６'])(
    'error: %p is not ASCII digits',
    (value) => {
      expect(caught(() => chainIdFromQuery(value))).toEqual(
        v422('chainId: must be a base-10 unsigned integer (ASCII digits only)'),
      );
    },
  );

  it('error: repeated parameter', () => {
    expect(caught(() => chainIdFromQuery(['56', '56']))).toEqual(v422('chainId: must be given at most once'));
  });

  it('error: an object from bracket syntax', () => {
    expect(caught(() => chainIdFromQuery({ a: '1' }))).toEqual(v422('chainId: must be a base-10 unsigned integer'));
  });
});

describe('assertServedChain', () => {
  it('behavior: served chains pass', () => {
    for (const id of SERVED) expect(() => assertServedChain(id, SERVED)).not.toThrow();
  });

  it('error: an unserved chain names itself and the served list', () => {
    expect(caught(() => assertServedChain(1, SERVED))).toEqual({
      code: 'UNSUPPORTED_CHAIN',
      status: 400,
      message: 'chainId: 1 is not served (served: 8453, 56, 4663)',
    });
  });

  it('error: nothing served', () => {
    expect(caught(() => assertServedChain(8453, [])).message).toBe('chainId: 8453 is not served (served: none)');
  });
});
