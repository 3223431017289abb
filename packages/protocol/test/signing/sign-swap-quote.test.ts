import fc from 'fast-check';
import { decodeAbiParameters, encodeAbiParameters, keccak256, parseAbiParameters, recoverAddress } from 'viem';
import { sign as viemSign } from 'viem/accounts';
import { ApiError } from '../../src/errors/api-error';
import { createDigestSigner } from '@pmm/core';
import type { DigestSigner } from '../../src/signing/digest-signer';
import { signSwapQuote } from '../../src/signing/sign-swap-quote';
import type { SwapQuoteFields } from '../../src/signing/swap-digest';
import { MAX_UINT256, RUNS, addressArb, privateKeyArb, testKey, uint256Arb } from '@pmm/testkit';

const digestTypes = parseAbiParameters('address, address, uint256, uint256, uint256, address');
const vdTypes = parseAbiParameters('uint256, uint256, address, bytes');
const a = (s: string): `0x${string}` => s.toLowerCase() as `0x${string}`;

const fieldsArb: fc.Arbitrary<SwapQuoteFields> = fc.record({
  tokenIn: addressArb,
  tokenOut: addressArb,
  timestamp: fc.oneof(fc.bigInt({ min: 1_600_000_000n, max: 4_000_000_000n }), uint256Arb),
  fee: fc.oneof(fc.bigInt({ min: 0n, max: 10_000n }), uint256Arb),
  originRate: uint256Arb,
  userAddress: addressArb,
});

const FIXED: SwapQuoteFields = {
  tokenIn: '0x4200000000000000000000000000000000000006',
  tokenOut: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913',
  timestamp: 1_700_000_000n,
  fee: 30n,
  originRate: 0n,
  userAddress: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8',
};

describe('signSwapQuote', () => {
  it.each(['libsecp256k1', 'noble'] as const)(
    'behavior: with %s, digest, signature and verificationData equal what viem computes, and the signature recovers to the signer',
    async (backend) => {
      await fc.assert(
        fc.asyncProperty(privateKeyArb, fieldsArb, async (key, f) => {
          const signer = createDigestSigner(key, { backend });
          const out = signSwapQuote(signer, f);

          const digest = keccak256(
            encodeAbiParameters(digestTypes, [
              a(f.tokenIn),
              a(f.tokenOut),
              f.timestamp,
              f.fee,
              f.originRate,
              a(f.userAddress),
            ]),
          );
          expect(out.digest).toBe(digest);
          expect(out.signature).toBe(await viemSign({ hash: digest, privateKey: key as `0x${string}`, to: 'hex' }));
          expect(await recoverAddress({ hash: digest, signature: out.signature as `0x${string}` })).toBe(
            signer.address,
          );
          expect(out.verificationData).toBe(
            encodeAbiParameters(vdTypes, [f.fee, f.originRate, a(f.userAddress), out.signature as `0x${string}`]),
          );
          const [fee, originRate, user, sig] = decodeAbiParameters(vdTypes, out.verificationData as `0x${string}`);
          expect([fee, originRate, user.toLowerCase(), sig]).toEqual([
            f.fee,
            f.originRate,
            a(f.userAddress),
            out.signature,
          ]);
        }),
        // The native path runs the full 1,000 cases. noble is ~10 ms per case here (key
        // derivation + signing in pure JS); its byte-equality with the native backend and
        // with ethers/viem is pinned on 1,000 cases in secp256k1-signer.test.ts.
        backend === 'noble' ? { ...RUNS, numRuns: 250 } : RUNS,
      );
    },
  );

  it('behavior: fixed vector (derived key; equal to what viem computes)', async () => {
    const key = testKey('1');
    const digest = keccak256(
      encodeAbiParameters(digestTypes, [
        a(FIXED.tokenIn),
        a(FIXED.tokenOut),
        FIXED.timestamp,
        FIXED.fee,
        FIXED.originRate,
        a(FIXED.userAddress),
      ]),
    );
    const signature = await viemSign({ hash: digest, privateKey: key, to: 'hex' });
    /** Computed once with viem; the lines above re-check them against viem. */
    const expected = {
      digest: '0x10e7b533b7ef19ad2d3e4d51861652f7ae04b7557910c72299f008bf9eeead3b',
      signature:
        '0x4cb66ea0f4fe12aa3692a7b306f4e8bf88b4fb9b1be139447df875930d845c5a4b82f60822b31dd3700b2f3acf50beba818d984d36d28da9bf3fb18d682a3f191b',
      verificationData:
        '0x000000000000000000000000000000000000000000000000000000000000001e000000000000000000000000000000000000000000000000000000000000000000000000000000000000000070997970c51812dc3a010c7d01b50e0d17dc79c8000000000000000000000000000000000000000000000000000000000000008000000000000000000000000000000000000000000000000000000000000000414cb66ea0f4fe12aa3692a7b306f4e8bf88b4fb9b1be139447df875930d845c5a4b82f60822b31dd3700b2f3acf50beba818d984d36d28da9bf3fb18d682a3f191b00000000000000000000000000000000000000000000000000000000000000',
    };
    expect({
      digest,
      signature,
      verificationData: encodeAbiParameters(vdTypes, [30n, 0n, a(FIXED.userAddress), signature]),
    }).toEqual(expected);
    for (const backend of ['libsecp256k1', 'noble'] as const) {
      expect(signSwapQuote(createDigestSigner(key, { backend }), FIXED)).toEqual(expected);
    }
  });

  it('error: a field that cannot be encoded is ENCODING_FAILED and the signer is not called', () => {
    let calls = 0;
    const signer: DigestSigner = {
      address: '0x0',
      backend: 'noble',
      sign: () => {
        calls++;
        return new Uint8Array(65);
      },
    };
    for (const f of [
      { ...FIXED, fee: -1n },
      { ...FIXED, originRate: MAX_UINT256 + 1n },
      { ...FIXED, userAddress: '0x12' },
    ]) {
      let caught: unknown;
      try {
        signSwapQuote(signer, f);
      } catch (err) {
        caught = err;
      }
      expect(caught).toBeInstanceOf(ApiError);
      expect((caught as ApiError).code).toBe('ENCODING_FAILED');
      expect((caught as ApiError).status).toBe(500);
    }
    expect(calls).toBe(0);
  });

  it('error: a failing signer is SIGNING_FAILED', () => {
    const signer: DigestSigner = {
      address: '0x0',
      backend: 'noble',
      sign: () => {
        throw new Error('hsm unavailable');
      },
    };
    let caught: unknown;
    try {
      signSwapQuote(signer, FIXED);
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(ApiError);
    expect((caught as ApiError).code).toBe('SIGNING_FAILED');
    expect((caught as ApiError).status).toBe(500);
  });
});
