/**
 * fast-check generators for the signing tests: random addresses in every accepted case,
 * uint256 values with both ends always in play, valid private keys, and the shared run
 * settings (>= 1,000 cases, fixed seed so a CI failure reproduces; fast-check prints the
 * seed and path of a failing case).
 */
import fc from 'fast-check';
import { getAddress, keccak256, toBytes } from 'viem';

export const MAX_UINT256 = (1n << 256n) - 1n;
export const CURVE_ORDER = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;

/** Settings of every property: at least 1,000 random cases, reproducible. */
export const RUNS = { numRuns: 1000, seed: 0x5eed_2025 } as const;

const hex = (bytes: Uint8Array): string => Buffer.from(bytes).toString('hex');

/** A random address written lowercase, uppercase or EIP-55 checksummed. */
export const addressArb: fc.Arbitrary<string> = fc
  .tuple(fc.uint8Array({ minLength: 20, maxLength: 20 }), fc.constantFrom('lower', 'upper', 'checksum'))
  .map(([bytes, style]) => {
    const lower = `0x${hex(bytes)}`;
    if (style === 'lower') return lower;
    if (style === 'upper') return `0x${hex(bytes).toUpperCase()}`;
    return getAddress(lower);
  });

/** Any uint256; 0 and 2^256-1 are drawn often (about 1 case in 10), not left to chance. */
export const uint256Arb: fc.Arbitrary<bigint> = fc.oneof(
  { arbitrary: fc.constantFrom(0n, 1n, MAX_UINT256), weight: 1 },
  { arbitrary: fc.bigInt({ min: 0n, max: MAX_UINT256 }), weight: 9 },
);

const toWord = (v: bigint): string => v.toString(16).padStart(64, '0');

/** A valid private key (1 … N-1) as 0x + 64 hex digits; the two ends about 1 case in 20. */
export const privateKeyArb: fc.Arbitrary<string> = fc
  .oneof(
    { arbitrary: fc.constantFrom(1n, CURVE_ORDER - 1n), weight: 1 },
    { arbitrary: fc.bigInt({ min: 1n, max: CURVE_ORDER - 1n }), weight: 19 },
  )
  .map((k) => `0x${toWord(k)}`);

/**
 * Any 32-byte digest. Values ≥ N (which keccak essentially never yields, but signers must
 * treat as digest mod N, per RFC 6979) and the edges are drawn on purpose.
 */
export const digestArb: fc.Arbitrary<Uint8Array> = fc
  .oneof(
    { arbitrary: fc.constantFrom(0n, 1n, CURVE_ORDER - 1n, CURVE_ORDER, MAX_UINT256), weight: 1 },
    { arbitrary: fc.bigInt({ min: CURVE_ORDER, max: MAX_UINT256 }), weight: 1 },
    { arbitrary: fc.bigInt({ min: 0n, max: MAX_UINT256 }), weight: 8 },
  )
  .map((v) => Uint8Array.from(Buffer.from(toWord(v), 'hex')));

/** A test key derived from a label (never a pasted key). */
export function testKey(label: string): `0x${string}` {
  return keccak256(toBytes(`pmm-core-test-key-${label}`));
}
