/**
 * The API's `verificationData` (spec 2.3): `abi.encode(uint256 fee, uint256 originRate,
 * address userAddress, bytes signature)`, which the router decodes in `swap`.
 *
 * Layout (a 65-byte signature gives 256 bytes):
 *   word 0 fee · word 1 originRate · word 2 userAddress · word 3 offset of the bytes (0x80)
 *   word 4 signature length · then the signature, right-padded with zeros to whole words.
 */
import {
  WORD_BYTES,
  bytesToHex,
  hexToBytes,
  paddedLength,
  writeAddressWord,
  writeLengthWord,
  writeUint256Word,
} from './abi-words';

/** Offset of the `bytes` tail: right after the four head words. */
const SIGNATURE_OFFSET = 4 * WORD_BYTES;

/** The decoded fields of a `verificationData`. */
export interface VerificationData {
  fee: bigint;
  originRate: bigint;
  /** Lowercase `0x` address (as encoded; no checksum information survives ABI encoding). */
  userAddress: string;
  /** `0x` hex of the signature bytes. */
  signature: string;
}

/**
 * `0x` hex of `abi.encode(fee, originRate, userAddress, signature)`. The signature may be
 * any length (the generic `bytes` encoding), though we always pass 65 bytes.
 * Throws a plain Error on an out-of-range number or a malformed address.
 */
export function encodeVerificationData(
  fee: bigint,
  originRate: bigint,
  userAddress: string,
  signature: Uint8Array,
): string {
  const buf = new Uint8Array(SIGNATURE_OFFSET + WORD_BYTES + paddedLength(signature.length));
  writeUint256Word(buf, 0, fee);
  writeUint256Word(buf, 32, originRate);
  writeAddressWord(buf, 64, userAddress);
  writeLengthWord(buf, 96, SIGNATURE_OFFSET);
  writeLengthWord(buf, SIGNATURE_OFFSET, signature.length);
  buf.set(signature, SIGNATURE_OFFSET + WORD_BYTES); // padding stays zero (fresh buffer)
  return bytesToHex(buf);
}

function readWord(buf: Uint8Array, index: number): bigint {
  return BigInt(bytesToHex(buf.subarray(index * WORD_BYTES, (index + 1) * WORD_BYTES)));
}

/**
 * Decodes a `verificationData` produced by {@link encodeVerificationData}. Strict: only the
 * canonical encoding is accepted (offset 0x80, zero address padding, zero tail padding, no
 * trailing bytes), so anything this returns re-encodes to the same hex. For tests and SDK
 * tooling, not the hot path. Throws a plain Error on anything else.
 */
export function decodeVerificationData(hex: string): VerificationData {
  const buf = hexToBytes(hex);
  if (buf.length < SIGNATURE_OFFSET + WORD_BYTES) throw new Error('verificationData: too short');
  const fee = readWord(buf, 0);
  const originRate = readWord(buf, 1);
  const addressWord = buf.subarray(64, 96);
  if (addressWord.subarray(0, 12).some((b) => b !== 0))
    throw new Error('verificationData: address has dirty high bytes');
  if (readWord(buf, 3) !== BigInt(SIGNATURE_OFFSET)) throw new Error('verificationData: unexpected bytes offset');
  const length = readWord(buf, 4);
  const dataStart = SIGNATURE_OFFSET + WORD_BYTES;
  if (length > BigInt(buf.length - dataStart)) throw new Error('verificationData: signature length exceeds data');
  const len = Number(length);
  if (buf.length !== dataStart + paddedLength(len)) throw new Error('verificationData: unexpected total length');
  if (buf.subarray(dataStart + len).some((b) => b !== 0)) throw new Error('verificationData: non-zero padding');
  return {
    fee,
    originRate,
    userAddress: bytesToHex(addressWord.subarray(12)),
    signature: bytesToHex(buf.subarray(dataStart, dataStart + len)),
  };
}
