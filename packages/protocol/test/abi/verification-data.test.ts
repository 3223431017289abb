import fc from 'fast-check';
import { AbiCoder } from 'ethers';
import { decodeAbiParameters, encodeAbiParameters, parseAbiParameters, toHex } from 'viem';
import { decodeVerificationData, encodeVerificationData } from '../../src/abi/verification-data';
import { MAX_UINT256, RUNS, addressArb, uint256Arb } from '@pmm/testkit';

const coder = AbiCoder.defaultAbiCoder();
const TYPES = ['uint256', 'uint256', 'address', 'bytes'];
const viemTypes = parseAbiParameters('uint256, uint256, address, bytes');

/** Mostly 65-byte signatures (what we send), plus other lengths for the generic bytes encoding. */
const signatureArb = fc.oneof(
  fc.uint8Array({ minLength: 65, maxLength: 65 }),
  fc.uint8Array({ minLength: 0, maxLength: 200 }),
);

const FIXED_USER = '0x70997970C51812dc3A010C7d01b50e0d17dc79C8';
const FIXED_SIGNATURE =
  '0x4cb66ea0f4fe12aa3692a7b306f4e8bf88b4fb9b1be139447df875930d845c5a4b82f60822b31dd3700b2f3acf50beba818d984d36d28da9bf3fb18d682a3f191b';
/** Computed once with viem encodeAbiParameters; re-checked against viem below. */
const FIXED_VERIFICATION_DATA =
  '0x000000000000000000000000000000000000000000000000000000000000001e000000000000000000000000000000000000000000000000000000000000000000000000000000000000000070997970c51812dc3a010c7d01b50e0d17dc79c8000000000000000000000000000000000000000000000000000000000000008000000000000000000000000000000000000000000000000000000000000000414cb66ea0f4fe12aa3692a7b306f4e8bf88b4fb9b1be139447df875930d845c5a4b82f60822b31dd3700b2f3acf50beba818d984d36d28da9bf3fb18d682a3f191b00000000000000000000000000000000000000000000000000000000000000';

const bytesOf = (hex: string): Uint8Array => Uint8Array.from(Buffer.from(hex.slice(2), 'hex'));

describe('verificationData', () => {
  it('behavior: encoding matches ethers AbiCoder and viem on random inputs; decoding inverts it and agrees with viem', () => {
    fc.assert(
      fc.property(uint256Arb, uint256Arb, addressArb, signatureArb, (fee, originRate, user, signature) => {
        const ours = encodeVerificationData(fee, originRate, user, signature);
        const lower = user.toLowerCase() as `0x${string}`;
        expect(ours).toBe(coder.encode(TYPES, [fee, originRate, lower, signature]));
        expect(ours).toBe(encodeAbiParameters(viemTypes, [fee, originRate, lower, toHex(signature)]));

        const decoded = decodeVerificationData(ours);
        expect(decoded).toEqual({ fee, originRate, userAddress: lower, signature: toHex(signature) });
        const [vFee, vRate, vUser, vSig] = decodeAbiParameters(viemTypes, ours as `0x${string}`);
        expect([vFee, vRate, vUser.toLowerCase(), vSig]).toEqual([fee, originRate, lower, toHex(signature)]);
      }),
      RUNS,
    );
  });

  it('behavior: fixed vector (pinned, and equal to what viem computes)', () => {
    expect(encodeAbiParameters(viemTypes, [30n, 0n, FIXED_USER, FIXED_SIGNATURE])).toBe(FIXED_VERIFICATION_DATA);
    expect(encodeVerificationData(30n, 0n, FIXED_USER, bytesOf(FIXED_SIGNATURE))).toBe(FIXED_VERIFICATION_DATA);
    // A 65-byte signature gives 4 head words + length + 3 data words.
    expect((FIXED_VERIFICATION_DATA.length - 2) / 2).toBe(256);
  });

  it('error: encoding rejects out-of-range numbers and malformed addresses', () => {
    const sig = bytesOf(FIXED_SIGNATURE);
    expect(() => encodeVerificationData(-1n, 0n, FIXED_USER, sig)).toThrow('uint256: out of range');
    expect(() => encodeVerificationData(0n, MAX_UINT256 + 1n, FIXED_USER, sig)).toThrow('uint256: out of range');
    expect(() => encodeVerificationData(0n, 0n, '0xabc', sig)).toThrow(/^address: /);
  });

  it('error: decoding rejects every non-canonical or truncated form', () => {
    const good = FIXED_VERIFICATION_DATA.slice(2);
    const at = (byte: number, value: string) =>
      `0x${good.slice(0, byte * 2)}${value}${good.slice(byte * 2 + value.length)}`;
    const cases: Array<[string, RegExp]> = [
      ['0x', /too short/],
      [FIXED_VERIFICATION_DATA.slice(0, -64), /length/], // last data word cut
      [FIXED_VERIFICATION_DATA + '00'.repeat(32), /unexpected total length/], // trailing word
      [at(64, '01'), /dirty high bytes/], // address word high byte
      [at(127, 'a0'), /unexpected bytes offset/], // offset 0xa0 instead of 0x80
      [at(159, '20'), /unexpected total length/], // length 32: the tail would be one word, not three
      [at(159, 'ff'), /exceeds data/],
      [at(255, '01'), /non-zero padding/],
      [FIXED_VERIFICATION_DATA.slice(0, -1), /odd number/],
    ];
    for (const [hex, message] of cases) expect(() => decodeVerificationData(hex)).toThrow(message);
  });
});
