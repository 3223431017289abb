import fc from 'fast-check';
import { AbiCoder, keccak256 as ethersKeccak } from 'ethers';
import { encodeAbiParameters, keccak256, parseAbiParameters } from 'viem';
import { bytesToHex } from '../../src/abi/abi-words';
import {
  SWAP_DIGEST_PREIMAGE_BYTES,
  encodeSwapDigestPreimage,
  swapDigest,
  type SwapQuoteFields,
} from '../../src/signing/swap-digest';
import { MAX_UINT256, RUNS, addressArb, uint256Arb } from '@pmm/testkit';

const coder = AbiCoder.defaultAbiCoder();
const TYPES = ['address', 'address', 'uint256', 'uint256', 'uint256', 'address'];
const viemTypes = parseAbiParameters('address, address, uint256, uint256, uint256, address');

const fieldsArb: fc.Arbitrary<SwapQuoteFields> = fc.record({
  tokenIn: addressArb,
  tokenOut: addressArb,
  timestamp: uint256Arb,
  fee: uint256Arb,
  originRate: uint256Arb,
  userAddress: addressArb,
});

function ethersPreimage(f: SwapQuoteFields): string {
  return coder.encode(TYPES, [
    f.tokenIn.toLowerCase(),
    f.tokenOut.toLowerCase(),
    f.timestamp,
    f.fee,
    f.originRate,
    f.userAddress.toLowerCase(),
  ]);
}

function viemPreimage(f: SwapQuoteFields): `0x${string}` {
  const a = (s: string): `0x${string}` => s.toLowerCase() as `0x${string}`;
  return encodeAbiParameters(viemTypes, [
    a(f.tokenIn),
    a(f.tokenOut),
    f.timestamp,
    f.fee,
    f.originRate,
    a(f.userAddress),
  ]);
}

const FIXED: SwapQuoteFields = {
  tokenIn: '0x4200000000000000000000000000000000000006',
  tokenOut: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913',
  timestamp: 1_700_000_000n,
  fee: 30n,
  originRate: 0n,
  userAddress: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8',
};
/** Computed once with viem (encodeAbiParameters + keccak256); re-checked against viem below. */
const FIXED_DIGEST = '0x10e7b533b7ef19ad2d3e4d51861652f7ae04b7557910c72299f008bf9eeead3b';

describe('swapDigest', () => {
  it('behavior: preimage and digest match ethers AbiCoder and viem encodeAbiParameters on random fields', () => {
    fc.assert(
      fc.property(fieldsArb, (f) => {
        const preimage = bytesToHex(encodeSwapDigestPreimage(f));
        expect(preimage).toBe(ethersPreimage(f));
        expect(preimage).toBe(viemPreimage(f));
        const digest = bytesToHex(swapDigest(f));
        expect(digest).toBe(ethersKeccak(ethersPreimage(f)));
        expect(digest).toBe(keccak256(viemPreimage(f)));
      }),
      RUNS,
    );
  });

  it('behavior: fixed vector (pinned, and equal to what viem computes)', () => {
    expect(keccak256(viemPreimage(FIXED))).toBe(FIXED_DIGEST);
    expect(bytesToHex(swapDigest(FIXED))).toBe(FIXED_DIGEST);
  });

  it('behavior: the preimage is six words and the digest 32 bytes, with no EIP-191 prefix', () => {
    expect(encodeSwapDigestPreimage(FIXED).length).toBe(SWAP_DIGEST_PREIMAGE_BYTES);
    expect(SWAP_DIGEST_PREIMAGE_BYTES).toBe(192);
    expect(swapDigest(FIXED).length).toBe(32);
  });

  it('behavior: address case does not change the digest', () => {
    const lower = { ...FIXED, tokenOut: FIXED.tokenOut.toLowerCase(), userAddress: FIXED.userAddress.toLowerCase() };
    const upper = { ...FIXED, tokenOut: '0x' + FIXED.tokenOut.slice(2).toUpperCase() };
    expect(bytesToHex(swapDigest(lower))).toBe(FIXED_DIGEST);
    expect(bytesToHex(swapDigest(upper))).toBe(FIXED_DIGEST);
  });

  it('behavior: every field is covered by the digest', () => {
    const base = bytesToHex(swapDigest(FIXED));
    const changed: SwapQuoteFields[] = [
      { ...FIXED, tokenIn: '0x4200000000000000000000000000000000000007' },
      { ...FIXED, tokenOut: '0x4200000000000000000000000000000000000006' },
      { ...FIXED, timestamp: FIXED.timestamp + 1n },
      { ...FIXED, fee: FIXED.fee + 1n },
      { ...FIXED, originRate: 1n },
      { ...FIXED, userAddress: '0x70997970c51812dc3a010c7d01b50e0d17dc79c9' },
    ];
    for (const f of changed) expect(bytesToHex(swapDigest(f))).not.toBe(base);
  });

  it('error: an out-of-range number or a malformed address throws', () => {
    expect(() => swapDigest({ ...FIXED, fee: -1n })).toThrow('uint256: out of range');
    expect(() => swapDigest({ ...FIXED, originRate: MAX_UINT256 + 1n })).toThrow('uint256: out of range');
    expect(() => swapDigest({ ...FIXED, timestamp: 1_700_000_000 as unknown as bigint })).toThrow(
      'uint256: expected a bigint',
    );
    expect(() => swapDigest({ ...FIXED, userAddress: '0x1234' })).toThrow(/^address: /);
  });
});
