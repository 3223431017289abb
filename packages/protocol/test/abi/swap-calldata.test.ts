import fc from 'fast-check';
import { Interface, id } from 'ethers';
import { encodeFunctionData, parseAbi, toFunctionSelector, toHex } from 'viem';
import {
  SWAP_SELECTOR,
  SWAP_SIGNATURE,
  decodeSwapCalldata,
  encodeSwapCalldata,
  type SwapCallArgs,
} from '../../src/abi/swap-calldata';
import { MAX_UINT256, RUNS, addressArb, uint256Arb } from '@pmm/testkit';

const ethersRouter = new Interface(['function swap(address,uint256,address,uint256,uint256,bytes)']);
const viemAbi = parseAbi(['function swap(address,uint256,address,uint256,uint256,bytes)']);

/** 256 bytes is our verificationData; any other length must encode as generic bytes. */
const dataArb = fc
  .oneof(fc.uint8Array({ minLength: 256, maxLength: 256 }), fc.uint8Array({ maxLength: 400 }))
  .map((b) => toHex(b));

const argsArb: fc.Arbitrary<SwapCallArgs> = fc.record({
  tokenIn: addressArb,
  amountIn: uint256Arb,
  tokenOut: addressArb,
  minAmountOut: uint256Arb,
  quoteTimestamp: uint256Arb,
  verificationData: fc.tuple(dataArb, fc.boolean()).map(([h, upper]) => (upper ? `0x${h.slice(2).toUpperCase()}` : h)),
});

const a = (s: string): `0x${string}` => s.toLowerCase() as `0x${string}`;

const FIXED: SwapCallArgs = {
  tokenIn: '0x4200000000000000000000000000000000000006',
  amountIn: 10n ** 18n,
  tokenOut: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913',
  minAmountOut: 2_500_000_000n,
  quoteTimestamp: 1_700_000_000n,
  verificationData:
    '0x000000000000000000000000000000000000000000000000000000000000001e000000000000000000000000000000000000000000000000000000000000000000000000000000000000000070997970c51812dc3a010c7d01b50e0d17dc79c8000000000000000000000000000000000000000000000000000000000000008000000000000000000000000000000000000000000000000000000000000000414cb66ea0f4fe12aa3692a7b306f4e8bf88b4fb9b1be139447df875930d845c5a4b82f60822b31dd3700b2f3acf50beba818d984d36d28da9bf3fb18d682a3f191b00000000000000000000000000000000000000000000000000000000000000',
};
/** Computed once with viem encodeFunctionData; re-checked against viem below. */
const FIXED_CALLDATA =
  '0xecd47daa00000000000000000000000042000000000000000000000000000000000000060000000000000000000000000000000000000000000000000de0b6b3a7640000000000000000000000000000833589fcd6edb6e08f4c7c32d4f71b54bda02913000000000000000000000000000000000000000000000000000000009502f900000000000000000000000000000000000000000000000000000000006553f10000000000000000000000000000000000000000000000000000000000000000c00000000000000000000000000000000000000000000000000000000000000100000000000000000000000000000000000000000000000000000000000000001e000000000000000000000000000000000000000000000000000000000000000000000000000000000000000070997970c51812dc3a010c7d01b50e0d17dc79c8000000000000000000000000000000000000000000000000000000000000008000000000000000000000000000000000000000000000000000000000000000414cb66ea0f4fe12aa3692a7b306f4e8bf88b4fb9b1be139447df875930d845c5a4b82f60822b31dd3700b2f3acf50beba818d984d36d28da9bf3fb18d682a3f191b00000000000000000000000000000000000000000000000000000000000000';

function viemCalldata(x: SwapCallArgs): string {
  return encodeFunctionData({
    abi: viemAbi,
    functionName: 'swap',
    args: [a(x.tokenIn), x.amountIn, a(x.tokenOut), x.minAmountOut, x.quoteTimestamp, a(x.verificationData)],
  });
}

describe('swap calldata', () => {
  it('behavior: SWAP_SELECTOR is the selector of swap(address,uint256,address,uint256,uint256,bytes) per ethers and viem', () => {
    expect(SWAP_SIGNATURE).toBe('swap(address,uint256,address,uint256,uint256,bytes)');
    expect(SWAP_SELECTOR).toBe(id(SWAP_SIGNATURE).slice(0, 10));
    expect(SWAP_SELECTOR).toBe(toFunctionSelector(SWAP_SIGNATURE));
    expect(SWAP_SELECTOR).toBe('0xecd47daa');
  });

  it('behavior: calldata matches ethers Interface and viem encodeFunctionData on random arguments', () => {
    fc.assert(
      fc.property(argsArb, (x) => {
        const ours = encodeSwapCalldata(x);
        expect(ours).toBe(
          ethersRouter.encodeFunctionData('swap', [
            a(x.tokenIn),
            x.amountIn,
            a(x.tokenOut),
            x.minAmountOut,
            x.quoteTimestamp,
            a(x.verificationData),
          ]),
        );
        expect(ours).toBe(viemCalldata(x));
      }),
      RUNS,
    );
  });

  it('behavior: fixed vector (pinned, and equal to what viem computes)', () => {
    expect(viemCalldata(FIXED)).toBe(FIXED_CALLDATA);
    expect(encodeSwapCalldata(FIXED)).toBe(FIXED_CALLDATA);
  });

  it('behavior: empty verificationData encodes as zero-length bytes', () => {
    const x = { ...FIXED, verificationData: '0x' };
    expect(encodeSwapCalldata(x)).toBe(viemCalldata(x));
  });

  it('error: bad numbers, addresses or hex throw', () => {
    expect(() => encodeSwapCalldata({ ...FIXED, amountIn: MAX_UINT256 + 1n })).toThrow('uint256: out of range');
    expect(() => encodeSwapCalldata({ ...FIXED, minAmountOut: -1n })).toThrow('uint256: out of range');
    expect(() => encodeSwapCalldata({ ...FIXED, tokenOut: '0x833589fcd6edb6e08f4c7c32d4f71b54bda0291' })).toThrow(
      /^address: /,
    );
    expect(() => encodeSwapCalldata({ ...FIXED, verificationData: '0x0' })).toThrow('hex: odd number of digits');
    expect(() => encodeSwapCalldata({ ...FIXED, verificationData: FIXED.verificationData.slice(2) })).toThrow(
      'hex: expected a 0x-prefixed string',
    );
    expect(() => encodeSwapCalldata({ ...FIXED, verificationData: '0xzz' })).toThrow('hex: invalid hex digit');
  });

  it('behavior: decodeSwapCalldata reads back what viem encodes (random arguments), lowercase', () => {
    fc.assert(
      fc.property(argsArb, (x) => {
        expect(decodeSwapCalldata(viemCalldata(x))).toEqual({
          tokenIn: x.tokenIn.toLowerCase(),
          amountIn: x.amountIn,
          tokenOut: x.tokenOut.toLowerCase(),
          minAmountOut: x.minAmountOut,
          quoteTimestamp: x.quoteTimestamp,
          verificationData: x.verificationData.toLowerCase(),
        });
      }),
      RUNS,
    );
  });

  it('boundary: decodeSwapCalldata follows the bytes offset and ignores trailing bytes', () => {
    // The bytes moved one word further (offset 0xe0), one junk word between: still valid ABI.
    const body = FIXED_CALLDATA.slice(10);
    const head = body.slice(0, 5 * 64);
    const tail = body.slice(6 * 64);
    const moved = `${SWAP_SELECTOR}${head}${(0xe0).toString(16).padStart(64, '0')}${'ff'.repeat(32)}${tail}${'00'.repeat(7)}`;
    expect(decodeSwapCalldata(moved)).toEqual(decodeSwapCalldata(FIXED_CALLDATA));
  });

  it('error: decodeSwapCalldata rejects another selector, truncated data, dirty addresses', () => {
    expect(() => decodeSwapCalldata(`0x12345678${FIXED_CALLDATA.slice(10)}`)).toThrow('swap calldata: not a swap call');
    expect(() => decodeSwapCalldata(FIXED_CALLDATA.slice(0, 200))).toThrow('swap calldata: too short');
    expect(() => decodeSwapCalldata(FIXED_CALLDATA.slice(0, FIXED_CALLDATA.length - 128))).toThrow(
      'swap calldata: bytes length out of range',
    );
    const dirty = `${SWAP_SELECTOR}ff${FIXED_CALLDATA.slice(12)}`;
    expect(() => decodeSwapCalldata(dirty)).toThrow('swap calldata: address has dirty high bytes');
  });
});
