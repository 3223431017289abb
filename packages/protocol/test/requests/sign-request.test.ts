import { ApiError } from '../../src/errors/api-error';
import { SIGN_REQUEST_SCHEMA, parseSignRequest, type SignRequestOptions } from '../../src/requests/sign-request';
import { UINT256_MAX } from '../../src/requests/parse-uint';

const WETH = '0x4200000000000000000000000000000000000006';
const USDC = '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913';
const USER = '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266';

const V2: SignRequestOptions = { maxFee: 10000n, allowChainId: true, allowSlippageBps: true };
const V1: SignRequestOptions = { maxFee: 10000n, allowChainId: false, allowSlippageBps: false };

const valid = (): Record<string, unknown> => ({ tokenIn: WETH, tokenOut: USDC, fee: '30', userAddress: USER });

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
const fails = (body: unknown, opts: SignRequestOptions = V2) => caught(() => parseSignRequest(body, opts));
const withField = (extra: Record<string, unknown>) => ({ ...valid(), ...extra });
const without = (name: string) => {
  const body = valid();
  delete body[name];
  return body;
};

describe('parseSignRequest: success', () => {
  it('default: chain 8453, minAmountOut 0, no amountIn', () => {
    expect(parseSignRequest(valid(), V2)).toEqual({
      chainId: 8453,
      tokenIn: WETH,
      tokenOut: USDC,
      fee: 30n,
      userAddress: USER,
      minAmountOut: 0n,
    });
    expect('amountIn' in parseSignRequest(valid(), V2)).toBe(false);
  });

  it('behavior: every field, addresses returned checksummed', () => {
    const body = {
      chainId: 56,
      tokenIn: WETH,
      tokenOut: USDC.toLowerCase(),
      fee: '0',
      userAddress: `0x${USER.slice(2).toUpperCase()}`,
      amountIn: '1000000000000000000',
      minAmountOut: '2999000000',
    };
    expect(parseSignRequest(body, V2)).toEqual({
      chainId: 56,
      tokenIn: WETH,
      tokenOut: USDC,
      fee: 0n,
      userAddress: USER,
      amountIn: 10n ** 18n,
      minAmountOut: 2999000000n,
    });
  });

  it("behavior: chainId 0 means 8453; unserved chains are not this parser's concern", () => {
    expect(parseSignRequest(withField({ chainId: 0 }), V2).chainId).toBe(8453);
    expect(parseSignRequest(withField({ chainId: 56 }), V2).chainId).toBe(56);
    expect(parseSignRequest(withField({ chainId: 1 }), V2).chainId).toBe(1);
    // well-formed however large: the signer answers UNSUPPORTED_CHAIN, not 422
    expect(parseSignRequest(withField({ chainId: 1e20 }), V2).chainId).toBe(Number.MAX_SAFE_INTEGER);
  });

  it('behavior: legacy options give chain 8453 without a chainId field', () => {
    expect(parseSignRequest(valid(), V1).chainId).toBe(8453);
  });

  it('behavior: fee boundaries 0 and maxFee accepted, maxFee + 1 rejected', () => {
    expect(parseSignRequest(withField({ fee: '0' }), V2).fee).toBe(0n);
    expect(parseSignRequest(withField({ fee: '10000' }), V2).fee).toBe(10000n);
    expect(fails(withField({ fee: '10001' }))).toEqual(v422('fee: must be between 0 and 10000'));
    expect(parseSignRequest(withField({ fee: '50' }), { ...V2, maxFee: 50n }).fee).toBe(50n);
    expect(fails(withField({ fee: '51' }), { ...V2, maxFee: 50n })).toEqual(v422('fee: must be between 0 and 50'));
  });

  it('behavior: amountIn boundaries 1 and 2^256-1 accepted', () => {
    expect(parseSignRequest(withField({ amountIn: '1' }), V2).amountIn).toBe(1n);
    expect(parseSignRequest(withField({ amountIn: UINT256_MAX.toString() }), V2).amountIn).toBe(UINT256_MAX);
  });

  it('behavior: minAmountOut boundaries 0 and 2^256-1 accepted', () => {
    expect(parseSignRequest(withField({ amountIn: '1', minAmountOut: '0' }), V2).minAmountOut).toBe(0n);
    expect(parseSignRequest(withField({ amountIn: '1', minAmountOut: UINT256_MAX.toString() }), V2).minAmountOut).toBe(
      UINT256_MAX,
    );
  });

  it("behavior: minAmountOut without amountIn is validated and returned (its use is the caller's)", () => {
    expect(parseSignRequest(withField({ minAmountOut: '5' }), V2).minAmountOut).toBe(5n);
    expect(fails(withField({ minAmountOut: '05' }))).toEqual(
      v422('minAmountOut: must be a canonical base-10 integer string (digits only, no sign, no leading zeros)'),
    );
  });

  it('behavior: a body with a null prototype is a plain object', () => {
    const body = Object.assign(Object.create(null) as Record<string, unknown>, valid());
    expect(parseSignRequest(body, V2).tokenIn).toBe(WETH);
  });
});

describe('parseSignRequest: 400 INVALID_JSON', () => {
  it.each([[undefined], [null], [[]], [[valid()]], ['{}'], [''], [42], [true], [new Date(0)]])(
    'error: body %p',
    (body) => {
      expect(fails(body)).toEqual({ code: 'INVALID_JSON', status: 400, message: 'request body must be a JSON object' });
    },
  );
});

describe('parseSignRequest: 400 UNSUPPORTED_FIELD', () => {
  it('error: an unknown field is named', () => {
    expect(fails(withField({ slippage: '1' }))).toEqual({
      code: 'UNSUPPORTED_FIELD',
      status: 400,
      message: 'slippage: unsupported field',
    });
  });

  it('error: the first unknown field in body order is named', () => {
    expect(fails({ b: 1, ...valid(), a: 1 }).message).toBe('b: unsupported field');
  });

  it('error: inherited property names are not fields', () => {
    expect(fails(withField({ constructor: 'x' })).message).toBe('constructor: unsupported field');
    expect(fails(JSON.parse(`{"__proto__": {"x": 1}, "tokenIn": "${WETH}"}`)).message).toBe(
      '__proto__: unsupported field',
    );
  });

  it('error: field names are case-sensitive', () => {
    expect(fails({ ...without('tokenIn'), TokenIn: WETH }).message).toBe('TokenIn: unsupported field');
  });

  it('error: chainId on legacy /v1, whatever its value', () => {
    const expected = {
      code: 'UNSUPPORTED_FIELD',
      status: 400,
      message: 'chainId: unsupported field (this endpoint serves chain 8453 only)',
    };
    expect(fails(withField({ chainId: 8453 }), V1)).toEqual(expected);
    expect(fails(withField({ chainId: 'x' }), V1)).toEqual(expected);
  });

  it('behavior: UNSUPPORTED_FIELD wins over any validation error', () => {
    expect(fails({ tokenIn: 'bad', extra: 1 }).code).toBe('UNSUPPORTED_FIELD');
    expect(fails({ chainId: -1, fee: 5 }, V1).code).toBe('UNSUPPORTED_FIELD');
  });
});

describe('parseSignRequest: 422 VALIDATION_ERROR', () => {
  it.each(['tokenIn', 'tokenOut', 'fee', 'userAddress'])('error: missing %s', (name) => {
    expect(fails(without(name))).toEqual(v422(`${name}: is required`));
  });

  it('error: an empty object names the first required field', () => {
    expect(fails({})).toEqual(v422('tokenIn: is required'));
  });

  it.each([
    ['"56"', '56', 'chainId: must be an integer'],
    ['-1', -1, 'chainId: must be a non-negative integer'],
    ['1.5', 1.5, 'chainId: must be an integer'],
    ['null', null, 'chainId: must be an integer'],
    ['true', true, 'chainId: must be an integer'],
  ])('error: chainId %s', (_name, chainId, message) => {
    expect(fails(withField({ chainId }))).toEqual(v422(message));
  });

  it('error: null for a field is a wrong type, not an omission', () => {
    expect(fails(withField({ amountIn: null }))).toEqual(v422('amountIn: must be a string'));
    expect(fails(withField({ tokenIn: null }))).toEqual(v422('tokenIn: must be a string'));
  });

  it.each([
    ['010', 'fee: must be a canonical base-10 integer string (digits only, no sign, no leading zeros)'],
    ['+1', 'fee: must be a canonical base-10 integer string (digits only, no sign, no leading zeros)'],
    [' 1', 'fee: must be a canonical base-10 integer string (digits only, no sign, no leading zeros)'],
    ['1e3', 'fee: must be a canonical base-10 integer string (digits only, no sign, no leading zeros)'],
    ['', 'fee: must be a canonical base-10 integer string (digits only, no sign, no leading zeros)'],
    [30, 'fee: must be a string'],
  ])('error: fee %p', (fee, message) => {
    expect(fails(withField({ fee }))).toEqual(v422(message));
  });

  it.each([
    ['0', 'amountIn: must be between 1 and 2^256-1'],
    [(UINT256_MAX + 1n).toString(), 'amountIn: must be between 1 and 2^256-1'],
    ['010', 'amountIn: must be a canonical base-10 integer string (digits only, no sign, no leading zeros)'],
    ['-1', 'amountIn: must be a canonical base-10 integer string (digits only, no sign, no leading zeros)'],
    ['1e18', 'amountIn: must be a canonical base-10 integer string (digits only, no sign, no leading zeros)'],
    [1000, 'amountIn: must be a string'],
  ])('error: amountIn %p', (amountIn, message) => {
    expect(fails(withField({ amountIn }))).toEqual(v422(message));
  });

  it('error: minAmountOut 2^256', () => {
    expect(fails(withField({ amountIn: '1', minAmountOut: (UINT256_MAX + 1n).toString() }))).toEqual(
      v422('minAmountOut: must be between 0 and 2^256-1'),
    );
  });

  it('error: mixed case with a bad checksum; uppercase and lowercase are fine', () => {
    const badChecksum = USDC.replace('fCD6', 'FCD6');
    expect(fails(withField({ tokenOut: badChecksum }))).toEqual(v422('tokenOut: invalid checksum'));
    expect(fails(withField({ userAddress: USER.replace('f39F', 'F39F') }))).toEqual(
      v422('userAddress: invalid checksum'),
    );
    expect(parseSignRequest(withField({ tokenOut: `0x${USDC.slice(2).toUpperCase()}` }), V2).tokenOut).toBe(USDC);
  });

  it('error: the zero address', () => {
    expect(fails(withField({ userAddress: '0x0000000000000000000000000000000000000000' }))).toEqual(
      v422('userAddress: zero address not allowed'),
    );
  });

  it('error: a malformed address', () => {
    expect(fails(withField({ tokenIn: 'WETH' }))).toEqual(v422('tokenIn: must be a 0x-prefixed 20-byte hex address'));
  });

  it('error: tokenIn equal to tokenOut in any letter case', () => {
    expect(fails(withField({ tokenOut: WETH }))).toEqual(v422('tokenOut: must differ from tokenIn'));
    expect(fails(withField({ tokenIn: USDC.toLowerCase(), tokenOut: `0x${USDC.slice(2).toUpperCase()}` }))).toEqual(
      v422('tokenOut: must differ from tokenIn'),
    );
  });

  describe('precedence between fields: chainId, tokenIn, tokenOut, fee, userAddress, amountIn, minAmountOut', () => {
    it('behavior: a wrong chainId is reported before missing required fields', () => {
      expect(fails({ chainId: '56' })).toEqual(v422('chainId: must be an integer'));
    });

    it('behavior: each field is checked completely before the next one', () => {
      const bad = {
        chainId: -1,
        tokenIn: USDC.replace('fCD6', 'FCD6'),
        tokenOut: 'x',
        fee: '10001',
        userAddress: '0x0000000000000000000000000000000000000000',
        amountIn: '0',
        minAmountOut: '-1',
      };
      const order: [string, string][] = [
        ['chainId', 'chainId: must be a non-negative integer'],
        ['tokenIn', 'tokenIn: invalid checksum'],
        ['tokenOut', 'tokenOut: must be a 0x-prefixed 20-byte hex address'],
        ['fee', 'fee: must be between 0 and 10000'],
        ['userAddress', 'userAddress: zero address not allowed'],
        ['amountIn', 'amountIn: must be between 1 and 2^256-1'],
        [
          'minAmountOut',
          'minAmountOut: must be a canonical base-10 integer string (digits only, no sign, no leading zeros)',
        ],
      ];
      // Fix the fields one by one: each time the next field in order is the one reported.
      const body: Record<string, unknown> = { ...bad };
      const good: Record<string, unknown> = { ...valid(), chainId: 56, amountIn: '1', minAmountOut: '0' };
      for (const [name, message] of order) {
        expect(fails(body)).toEqual(v422(message));
        body[name] = good[name];
      }
      expect(parseSignRequest(body, V2).chainId).toBe(56);
    });

    it('behavior: a missing required field is reported in field order, not before earlier type errors', () => {
      expect(fails({ tokenIn: WETH, fee: 5 })).toEqual(v422('tokenOut: is required'));
      expect(fails({ tokenIn: WETH, tokenOut: USDC, fee: 5 })).toEqual(v422('fee: must be a string'));
    });

    it('behavior: tokenIn == tokenOut comes after all per-field errors', () => {
      expect(fails(withField({ tokenOut: WETH, amountIn: '0' }))).toEqual(
        v422('amountIn: must be between 1 and 2^256-1'),
      );
    });
  });
});

describe('SIGN_REQUEST_SCHEMA', () => {
  it('behavior: rejects unknown fields and lists exactly the spec fields, in validation order', () => {
    expect(SIGN_REQUEST_SCHEMA.additionalProperties).toBe(false);
    expect(Object.keys(SIGN_REQUEST_SCHEMA.properties)).toEqual([
      'chainId',
      'tokenIn',
      'tokenOut',
      'fee',
      'userAddress',
      'amountIn',
      'minAmountOut',
      'slippageBps',
    ]);
    expect([...SIGN_REQUEST_SCHEMA.required]).toEqual(['tokenIn', 'tokenOut', 'fee', 'userAddress']);
  });

  it('behavior: parsing does not mutate the body (no coercion, no defaults, no removal)', () => {
    const body = withField({ chainId: 0, amountIn: '7' });
    const copy = JSON.parse(JSON.stringify(body)) as unknown;
    parseSignRequest(body, V2);
    expect(body).toEqual(copy);
  });
});

describe('SIGN_REQUEST_SCHEMA', () => {
  it('behavior: has only the body-level keywords parseSignRequest implements itself', () => {
    // parseSignRequest validates field by field; a new body-level keyword (minProperties,
    // dependentRequired, ...) would be silently ignored, so adding one must come with code.
    expect(Object.keys(SIGN_REQUEST_SCHEMA).sort()).toEqual(['additionalProperties', 'properties', 'required', 'type']);
    expect(SIGN_REQUEST_SCHEMA.type).toBe('object');
    expect(SIGN_REQUEST_SCHEMA.additionalProperties).toBe(false);
  });

  it('behavior: every required field is answered "is required" when missing, in schema order', () => {
    for (const field of SIGN_REQUEST_SCHEMA.required) {
      const body: Record<string, string> = {
        tokenIn: '0x' + '1'.repeat(40),
        tokenOut: '0x' + '2'.repeat(40),
        fee: '10',
        userAddress: '0x' + '3'.repeat(40),
      };
      delete body[field];
      expect(() => parseSignRequest(body, { maxFee: 10_000n, allowChainId: true, allowSlippageBps: true })).toThrow(
        `${field}: is required`,
      );
    }
  });
});

describe('parseSignRequest: slippageBps', () => {
  it('behavior: with amountIn, 0 and 10000 are accepted and returned; minAmountOut stays 0', () => {
    for (const slippageBps of [0, 50, 10_000]) {
      const parsed = parseSignRequest(withField({ amountIn: '1000', slippageBps }), V2);
      expect(parsed.slippageBps).toBe(slippageBps);
      expect(parsed.minAmountOut).toBe(0n);
    }
  });

  it('behavior: absent when not sent', () => {
    expect('slippageBps' in parseSignRequest(withField({ amountIn: '1' }), V2)).toBe(false);
  });

  it.each([[-1], [10_001]])('error: %p is out of range', (slippageBps) => {
    expect(fails(withField({ amountIn: '1', slippageBps }))).toEqual(
      v422('slippageBps: must be an integer from 0 to 10000 (basis points)'),
    );
  });

  it.each([[1.5], ['50'], [null], [true]])('error: %p is not an integer', (slippageBps) => {
    expect(fails(withField({ amountIn: '1', slippageBps }))).toEqual(v422('slippageBps: must be an integer'));
  });

  it('error: without amountIn', () => {
    expect(fails(withField({ slippageBps: 50 }))).toEqual(v422('slippageBps: only with amountIn'));
  });

  it('error: together with minAmountOut (even 0)', () => {
    expect(fails(withField({ amountIn: '1', minAmountOut: '0', slippageBps: 50 }))).toEqual(
      v422('slippageBps: not together with minAmountOut'),
    );
  });

  it('error: a malformed minAmountOut is named before slippageBps (schema order)', () => {
    expect(fails(withField({ amountIn: '1', minAmountOut: 'x', slippageBps: 50 })).message).toMatch(/^minAmountOut:/);
  });

  it('error: /v1 refuses the field as unknown', () => {
    expect(fails(withField({ amountIn: '1', slippageBps: 50 }), V1)).toEqual({
      code: 'UNSUPPORTED_FIELD',
      status: 400,
      message: 'slippageBps: unsupported field (on /v2/swap/sign only)',
    });
  });
});
