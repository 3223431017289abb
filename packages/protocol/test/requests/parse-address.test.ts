import fc from 'fast-check';
import { getAddress as viemGetAddress } from 'viem';
import { ApiError } from '../../src/errors/api-error';
import { isAddress, parseAddress } from '../../src/requests/parse-address';

function caught(fn: () => unknown): ApiError {
  try {
    fn();
  } catch (err) {
    if (err instanceof ApiError) return err;
    throw err;
  }
  throw new Error('expected an ApiError, nothing was thrown');
}

function expect422(value: unknown, message: string): void {
  const err = caught(() => parseAddress('tokenIn', value));
  expect({ code: err.code, status: err.status, message: err.message }).toEqual({
    code: 'VALIDATION_ERROR',
    status: 422,
    message,
  });
}

const USDC = '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913';

describe('parseAddress', () => {
  it('behavior: lowercase is accepted and returned checksummed', () => {
    expect(parseAddress('tokenIn', USDC.toLowerCase())).toBe(USDC);
  });

  it('behavior: uppercase hex digits with a lowercase 0x prefix are accepted', () => {
    expect(parseAddress('tokenIn', `0x${USDC.slice(2).toUpperCase()}`)).toBe(USDC);
  });

  it('behavior: a valid EIP-55 checksum is accepted as is', () => {
    expect(parseAddress('tokenIn', USDC)).toBe(USDC);
  });

  it('error: mixed case with a wrong checksum', () => {
    // flip the case of one letter of a valid checksum
    const bad = USDC.replace('fCD6', 'FCD6');
    expect422(bad, 'tokenIn: invalid checksum');
  });

  it('error: the zero address, in any spelling', () => {
    expect422('0x0000000000000000000000000000000000000000', 'tokenIn: zero address not allowed');
  });

  it.each([
    ['too short', '0x833589fcd6edb6e08f4c7c32d4f71b54bda0291'],
    ['too long', '0x833589fcd6edb6e08f4c7c32d4f71b54bda029130'],
    ['no prefix', '833589fcd6edb6e08f4c7c32d4f71b54bda02913'],
    ['uppercase prefix', '0X833589fcd6edb6e08f4c7c32d4f71b54bda02913'],
    ['non-hex digit', '0x833589fcd6edb6e08f4c7c32d4f71b54bda0291g'],
    ['surrounding space', ` ${USDC}`],
    ['trailing newline', `${USDC}\n`],
    ['empty', ''],
  ])('error: wrong shape (%s)', (_name, value) => {
    expect422(value, 'tokenIn: must be a 0x-prefixed 20-byte hex address');
  });

  it.each([[null], [123], [true], [{}], [[USDC]], [undefined]])('error: non-string %p', (value) => {
    expect422(value, 'tokenIn: must be a string');
  });

  it('behavior: the message names the field it was given', () => {
    expect(caught(() => parseAddress('userAddress', 'x')).message).toBe(
      'userAddress: must be a 0x-prefixed 20-byte hex address',
    );
  });

  it('behavior: agrees with viem on every spelling of random addresses', () => {
    const nonZero = fc.uint8Array({ minLength: 20, maxLength: 20 }).filter((b) => b.some((x) => x !== 0));
    fc.assert(
      fc.property(nonZero, fc.nat(), (bytes, pick) => {
        const lower = `0x${Buffer.from(bytes).toString('hex')}`;
        const checksum = viemGetAddress(lower);
        expect(parseAddress('a', lower)).toBe(checksum);
        expect(parseAddress('a', `0x${lower.slice(2).toUpperCase()}`)).toBe(checksum);
        expect(parseAddress('a', checksum)).toBe(checksum);
        // Flip one letter of the checksum: still mixed case means a wrong checksum.
        const letters = [...checksum.slice(2)].map((c, i) => (/[a-fA-F]/.test(c) ? i + 2 : -1)).filter((i) => i >= 0);
        if (letters.length === 0) return;
        const at = letters[pick % letters.length]!;
        const c = checksum[at]!;
        const flipped =
          checksum.slice(0, at) + (c === c.toLowerCase() ? c.toUpperCase() : c.toLowerCase()) + checksum.slice(at + 1);
        const hex = flipped.slice(2);
        if (hex === hex.toLowerCase() || hex === hex.toUpperCase()) {
          expect(parseAddress('a', flipped)).toBe(checksum);
        } else {
          expect(() => parseAddress('a', flipped)).toThrow('a: invalid checksum');
        }
      }),
      { numRuns: 300 },
    );
  });
});

describe('isAddress', () => {
  it('behavior: the shape only; a wrong checksum and the zero address still have it', () => {
    expect(isAddress(USDC)).toBe(true);
    expect(isAddress(USDC.replace('fCD6', 'FCD6'))).toBe(true);
    expect(isAddress('0x0000000000000000000000000000000000000000')).toBe(true);
  });

  it.each([['0X833589fcd6edb6e08f4c7c32d4f71b54bda02913'], [` ${USDC}`], [`${USDC}\n`], [''], [null], [123], [[USDC]]])(
    'behavior: %p is not an address',
    (value) => {
      expect(isAddress(value)).toBe(false);
    },
  );
});
