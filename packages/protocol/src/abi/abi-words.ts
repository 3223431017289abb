/**
 * The few ABI building blocks the hot signing path needs: 32-byte words written into a
 * preallocated buffer, and validated hex <-> bytes. A generic ABI coder (ethers' AbiCoder)
 * re-parses types on every call and is the bottleneck at ~2,800 digests/s; the layouts we
 * sign are fixed, so we write them word by word instead. Every encoder built on these is
 * checked byte for byte against ethers and viem in the tests. The indexer's per-block codec
 * (services/indexer/src/chain/call-codec.ts) is built on these words too: docs/decisions/0060-abi-codecs.md.
 *
 * Errors are plain `Error`s whose messages never echo the input (callers map them to
 * `ENCODING_FAILED`; a bad value could be anything, including a mistyped secret).
 */
import { keccak256 } from './keccak256';
import { isAddress } from '../requests/parse-address';
import { UINT256_MAX } from '../requests/parse-uint';

/** Size of one ABI word in bytes. */
export const WORD_BYTES = 32;

/** Value of each ASCII hex digit, -1 for every other byte. */
const HEX_VALUE = new Int8Array(256).fill(-1);
for (let i = 0; i < 10; i++) HEX_VALUE[0x30 + i] = i;
for (let i = 0; i < 6; i++) {
  HEX_VALUE[0x41 + i] = 10 + i;
  HEX_VALUE[0x61 + i] = 10 + i;
}

/** Value of the hex digit at `text[index]`, or -1 when it is not a hex digit. */
function hexDigit(text: string, index: number): number {
  const code = text.charCodeAt(index);
  // charCodeAt is NaN past the end and may exceed 255; both count as "not hex".
  return code < 256 ? (HEX_VALUE[code] ?? -1) : -1;
}

/**
 * Decodes `byteLength` bytes from the hex digits of `text` starting at `textOffset` into
 * `out` at `outOffset`. INVARIANT: throws before returning if any digit is not hex, so a
 * caller never sees a half-valid result used as if it were valid.
 */
function decodeHexInto(
  text: string,
  textOffset: number,
  out: Uint8Array,
  outOffset: number,
  byteLength: number,
  what: string,
): void {
  for (let i = 0; i < byteLength; i++) {
    const hi = hexDigit(text, textOffset + 2 * i);
    const lo = hexDigit(text, textOffset + 2 * i + 1);
    if (hi < 0 || lo < 0) throw new Error(`${what}: invalid hex digit`);
    out[outOffset + i] = (hi << 4) | lo;
  }
}

/** True when `text` starts with `0x` or `0X`. */
function has0x(text: string): boolean {
  return text.charCodeAt(0) === 0x30 && (text.charCodeAt(1) | 0x20) === 0x78;
}

function checkSlot(out: Uint8Array, offset: number): void {
  if (!Number.isInteger(offset) || offset < 0 || offset + WORD_BYTES > out.length) {
    throw new Error('abi word: slot outside the buffer');
  }
}

/**
 * Writes `address` (`0x` + 40 hex digits, any case; the checksum is not checked here:
 * addresses reaching the encoders were validated at the edge) as an ABI `address` word:
 * 12 zero bytes, then the 20 address bytes.
 */
export function writeAddressWord(out: Uint8Array, offset: number, address: string): void {
  checkSlot(out, offset);
  if (typeof address !== 'string' || address.length !== 42 || !has0x(address)) {
    throw new Error('address: expected 0x followed by 40 hex digits');
  }
  out.fill(0, offset, offset + 12);
  decodeHexInto(address, 2, out, offset + 12, 20, 'address');
}

/**
 * Writes `value` as a big-endian `uint256` word.
 * Throws when `value` is not a bigint or is outside 0 … 2^256-1 (never wraps silently).
 */
export function writeUint256Word(out: Uint8Array, offset: number, value: bigint): void {
  checkSlot(out, offset);
  if (typeof value !== 'bigint') throw new Error('uint256: expected a bigint');
  if (value < 0n || value > UINT256_MAX) throw new Error('uint256: out of range');
  // bigint -> hex is native and fast; right-align its digits in the word.
  let hex = value.toString(16);
  if (hex.length % 2 === 1) hex = '0' + hex;
  const byteLength = hex.length / 2;
  const start = offset + WORD_BYTES - byteLength;
  out.fill(0, offset, start);
  decodeHexInto(hex, 0, out, start, byteLength, 'uint256');
}

/**
 * Writes a small non-negative integer (an ABI offset or length) as a `uint256` word.
 * Byte arithmetic on a JS number: no bigint allocation for these bookkeeping words.
 */
export function writeLengthWord(out: Uint8Array, offset: number, value: number): void {
  checkSlot(out, offset);
  if (!Number.isSafeInteger(value) || value < 0) throw new Error('abi length: expected a safe non-negative integer');
  out.fill(0, offset, offset + WORD_BYTES);
  let v = value;
  for (let i = offset + WORD_BYTES - 1; v > 0; i--) {
    out[i] = v % 256;
    v = Math.floor(v / 256);
  }
}

/** Length of `byteLength` bytes once right-padded with zeros to whole ABI words. */
export function paddedLength(byteLength: number): number {
  return Math.ceil(byteLength / WORD_BYTES) * WORD_BYTES;
}

/**
 * Decodes `0x`-prefixed hex (any case, even number of digits, `0x` alone is empty) into a
 * new Uint8Array. Throws on a missing prefix, an odd length or a non-hex digit (unlike
 * `Buffer.from(hex, 'hex')`, which silently stops at the first bad digit).
 */
export function hexToBytes(hex: string): Uint8Array {
  if (typeof hex !== 'string' || !has0x(hex)) throw new Error('hex: expected a 0x-prefixed string');
  if (hex.length % 2 !== 0) throw new Error('hex: odd number of digits');
  const out = new Uint8Array((hex.length - 2) / 2);
  decodeHexInto(hex, 2, out, 0, out.length, 'hex');
  return out;
}

/**
 * Lowercase `0x`-prefixed hex of `bytes` (Node's native hex encoder over a zero-copy view).
 * Node-only on purpose: the portable encoders (a 256-entry table joined or concatenated, char
 * codes through String.fromCharCode or a latin1 TextDecoder) took 2-4x as long for the 65 to
 * ~520 bytes of a signature, verificationData and calldata, about 3 us more per sign request
 * (~5% of the in-process sign path). The SDK's browser bundle does not reach this function.
 */
export function bytesToHex(bytes: Uint8Array): string {
  return '0x' + Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('hex');
}

// Hex-string words, for layouts assembled as strings (the indexer's per-block batch of
// ~1,200 `quote()` calls, where string concatenation beats filling buffers). Bare hex here:
// lowercase, no `0x`.

/**
 * One character class and the length checked apart, never a group repeated per byte: such a
 * group made V8 take 10-30 ms on the ~1 MB answer of a 100-pair block call (and it grows
 * with the input), where this takes well under a millisecond.
 */
const HEX_DIGITS = /^0x[0-9a-fA-F]*$/;

/** The 4-byte selector of a canonical function signature (`name(type,…)`), as `0x` + 8 hex digits. */
export function functionSelector(signature: string): string {
  return bytesToHex(keccak256(new TextEncoder().encode(signature)).subarray(0, 4));
}

/** A uint256 word as 64 bare hex digits; throws outside 0 … 2^256-1. */
export function uint256WordHex(value: bigint | number): string {
  const v = typeof value === 'number' ? BigInt(value) : value;
  if (v < 0n || v > UINT256_MAX) throw new RangeError('uint256: out of range');
  return v.toString(16).padStart(64, '0');
}

/** An address word as 64 bare hex digits: 24 zeros, then the 40 lowercase address digits. */
export function addressWordHex(address: string): string {
  if (!isAddress(address)) throw new Error('address: expected 0x followed by 40 hex digits');
  return '000000000000000000000000' + address.slice(2).toLowerCase();
}

/** The bare lowercase hex of `0x`-prefixed bytes; throws on anything else. */
export function bareHex(hex: string): string {
  if (hex.length % 2 !== 0 || !HEX_DIGITS.test(hex)) throw new Error('hex: expected 0x-prefixed bytes');
  return hex.slice(2).toLowerCase();
}

/** Bare hex right-padded with zeros to whole words. */
export function padHexToWords(bare: string): string {
  const rem = (bare.length / 2) % WORD_BYTES;
  return rem === 0 ? bare : bare + '0'.repeat((WORD_BYTES - rem) * 2);
}
