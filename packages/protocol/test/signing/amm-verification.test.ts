import fc from 'fast-check';
import { TypedDataEncoder, Wallet } from 'ethers';
import { getTypesForEIP712Domain, hashDomain, hashTypedData, recoverTypedDataAddress } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { bytesToHex } from '../../src/abi/abi-words';
import {
  ammVerificationDigest,
  ammVerificationDomainSeparator,
  signAmmVerification,
} from '../../src/signing/amm-verification';
import { ammVerificationTypedData, type AmmVerificationParams } from '../../src/signing/amm-verification-typed-data';
import { createDigestSigner } from '@pmm/core';
import { MAX_UINT256, RUNS, addressArb, testKey, uint256Arb } from '@pmm/testkit';

const KEYS = [testKey('amm-1'), testKey('amm-2'), testKey('amm-3')];
const SIGNERS = KEYS.map((k) => createDigestSigner(k));

const paramsArb: fc.Arbitrary<AmmVerificationParams> = fc.record({
  chainId: fc.oneof(fc.constantFrom(8453, 56, 4663, 0, 1), fc.integer({ min: 0, max: 2 ** 32 }), fc.maxSafeNat()),
  verifier: addressArb,
  tokenIn: addressArb,
  tokenOut: addressArb,
  timestampInMilisec: fc.oneof(fc.bigInt({ min: 1_600_000_000_000n, max: 4_000_000_000_000n }), uint256Arb),
});

/** ethers wants checksummed or lowercase addresses; the encoders take any case. */
function lowered(p: AmmVerificationParams): AmmVerificationParams {
  return {
    ...p,
    verifier: p.verifier.toLowerCase(),
    tokenIn: p.tokenIn.toLowerCase(),
    tokenOut: p.tokenOut.toLowerCase(),
  };
}

/** Passed to viem as is, no cast: the typed data must type-check against viem's own types. */
function viemTypedData(p: AmmVerificationParams) {
  return ammVerificationTypedData(lowered(p));
}

const FIXED: AmmVerificationParams = {
  chainId: 8453,
  verifier: '0x5FbDB2315678afecb367f032d93F642f64180aa3',
  tokenIn: '0x4200000000000000000000000000000000000006',
  tokenOut: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913',
  timestampInMilisec: 1_700_000_000_123n,
};
/** Computed once with viem hashTypedData / signTypedData; re-checked against viem below. */
const FIXED_DIGEST = '0x0bc03f34f8be06d4601765f4a3a780181613e236eeeeb7e677414665998d031c';
const FIXED_SIGNATURE =
  '0x93ecb002b9f2d64171e01c6b78c45d6da1f4384dd37d8f38a1f037d803c9522c468bb8f0f012c2bc06a5f1604a120a235d841b7929fbc9ecdf5d61381aa34eee1b';

describe('AmmVerification EIP-712', () => {
  it('behavior: digest equals ethers TypedDataEncoder.hash and viem hashTypedData; the signature recovers with viem', async () => {
    await fc.assert(
      fc.asyncProperty(paramsArb, fc.nat({ max: SIGNERS.length - 1 }), async (p, i) => {
        const { domain, types, message } = ammVerificationTypedData(lowered(p));
        const digest = bytesToHex(ammVerificationDigest(p));
        expect(digest).toBe(TypedDataEncoder.hash(domain, types, message));
        expect(digest).toBe(hashTypedData(viemTypedData(p)));

        const signer = SIGNERS[i]!;
        const signature = signAmmVerification(signer, p) as `0x${string}`;
        expect(await recoverTypedDataAddress({ ...viemTypedData(p), signature })).toBe(signer.address);
      }),
      RUNS,
    );
  });

  it('behavior: the signature is what ethers Wallet.signTypedData and viem signTypedData produce from the typed data', async () => {
    await fc.assert(
      fc.asyncProperty(paramsArb, fc.nat({ max: KEYS.length - 1 }), async (p, i) => {
        const key = KEYS[i]!;
        const { domain, types, message } = ammVerificationTypedData(lowered(p));
        const ours = signAmmVerification(SIGNERS[i]!, p);
        expect(ours).toBe(await new Wallet(key).signTypedData(domain, types, message));
        expect(ours).toBe(await privateKeyToAccount(key).signTypedData(viemTypedData(p)));
      }),
      // ethers and viem sign in pure JS (~1 ms each): 200 cases keep this test under a few seconds;
      // the 1,000-case digest property above covers the encoding.
      { ...RUNS, numRuns: 200 },
    );
  });

  it('behavior: fixed vector (pinned, and equal to what viem computes)', async () => {
    const key = testKey('1');
    expect(hashTypedData(viemTypedData(FIXED))).toBe(FIXED_DIGEST);
    expect(await privateKeyToAccount(key).signTypedData(viemTypedData(FIXED))).toBe(FIXED_SIGNATURE);
    expect(bytesToHex(ammVerificationDigest(FIXED))).toBe(FIXED_DIGEST);
    for (const backend of ['libsecp256k1', 'noble'] as const) {
      expect(signAmmVerification(createDigestSigner(key, { backend }), FIXED)).toBe(FIXED_SIGNATURE);
    }
  });

  it('behavior: the typed data has the spec domain, type and member order', () => {
    expect(ammVerificationTypedData(FIXED)).toEqual({
      domain: { name: 'VerificationImpl', version: '1', chainId: 8453, verifyingContract: FIXED.verifier },
      types: {
        AmmVerification: [
          { name: 'tokenIn', type: 'address' },
          { name: 'tokenOut', type: 'address' },
          { name: 'timestampInMilisec', type: 'uint256' },
        ],
      },
      primaryType: 'AmmVerification',
      message: { tokenIn: FIXED.tokenIn, tokenOut: FIXED.tokenOut, timestampInMilisec: FIXED.timestampInMilisec },
    });
  });

  it('behavior: the cached domain separator matches ethers and viem, ignores address case, and cannot be corrupted by a caller', () => {
    fc.assert(
      fc.property(fc.constantFrom(8453, 56, 4663), addressArb, (chainId, verifier) => {
        const domain = {
          name: 'VerificationImpl',
          version: '1',
          chainId,
          verifyingContract: verifier.toLowerCase() as `0x${string}`,
        };
        const expected = TypedDataEncoder.hashDomain(domain);
        const types = { EIP712Domain: getTypesForEIP712Domain({ domain }) };
        expect(expected).toBe(hashDomain({ domain, types } as unknown as Parameters<typeof hashDomain>[0]));
        expect(bytesToHex(ammVerificationDomainSeparator(chainId, verifier))).toBe(expected);
        expect(bytesToHex(ammVerificationDomainSeparator(chainId, verifier.toUpperCase().replace('0X', '0x')))).toBe(
          expected,
        );
      }),
      { ...RUNS, numRuns: 200 },
    );
    const copy = ammVerificationDomainSeparator(FIXED.chainId, FIXED.verifier);
    copy.fill(0);
    expect(bytesToHex(ammVerificationDigest(FIXED))).toBe(FIXED_DIGEST);
  });

  it('behavior: every field and every domain member is covered by the digest', () => {
    const changed: AmmVerificationParams[] = [
      { ...FIXED, chainId: 56 },
      { ...FIXED, verifier: '0x5fbdb2315678afecb367f032d93f642f64180aa4' },
      { ...FIXED, tokenIn: FIXED.tokenOut, tokenOut: FIXED.tokenIn },
      { ...FIXED, timestampInMilisec: FIXED.timestampInMilisec + 1n },
    ];
    for (const p of changed) expect(bytesToHex(ammVerificationDigest(p))).not.toBe(FIXED_DIGEST);
  });

  it('error: malformed input throws', () => {
    expect(() => ammVerificationDigest({ ...FIXED, chainId: -1 })).toThrow('chainId');
    expect(() => ammVerificationDigest({ ...FIXED, chainId: 1.5 })).toThrow('chainId');
    expect(() => ammVerificationDigest({ ...FIXED, verifier: '0x1234' })).toThrow(/^address: /);
    expect(() => ammVerificationDigest({ ...FIXED, tokenIn: 'nope' })).toThrow(/^address: /);
    expect(() => ammVerificationTypedData({ ...FIXED, tokenOut: '0x1234' })).toThrow(/^tokenOut: /);
    expect(() => ammVerificationDigest({ ...FIXED, timestampInMilisec: MAX_UINT256 + 1n })).toThrow(
      'uint256: out of range',
    );
  });
});
