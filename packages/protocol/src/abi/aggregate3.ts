/**
 * Multicall3 `aggregate3(Call3[])` in and out, `allowFailure = true` on every call: the
 * indexer's per-block call (every `quote()` of every ladder) and the signer's batched firm
 * quotes (docs/decisions/0070-firm-quotes-share-a-flight-and-a-round-trip.md). Written word by
 * word as hex (docs/decisions/0060-abi-codecs.md); checked byte for byte against ethers and viem
 * in the indexer's call-codec test. The answer comes from a node, which is not trusted: every
 * length and offset it declares is checked before anything is read or allocated for it.
 *
 * Hex strings here are lowercase, `0x`-prefixed at the boundaries, bare inside.
 */
import { addressWordHex, bareHex, functionSelector, padHexToWords, uint256WordHex } from './abi-words';

/** One call inside a batch. */
export interface Call {
  target: string;
  /** 0x-prefixed calldata. */
  data: string;
}

/** One call's outcome: `data` is the 0x-prefixed return data (or revert data when !success). */
export interface CallResult {
  success: boolean;
  data: string;
}

/** The selector as 8 bare hex digits (no `0x`). */
export const AGGREGATE3_SELECTOR = functionSelector('aggregate3((address,bool,bytes)[])').slice(2);

const ZERO_WORD = '0'.repeat(64);
const ONE_WORD = uint256WordHex(1);
/** `allowFailure = true` and the offset of `callData` (3 head words): the same in every Call3 tuple. */
const CALL3_FIXED_WORDS = ONE_WORD + uint256WordHex(0x60);

/**
 * Calldata of Multicall3 `aggregate3(Call3[])` with `allowFailure = true` on every call, so
 * one failing `quote()` (past the curve's depth, over the reserves) fails only itself.
 */
export function encodeAggregate3(calls: readonly Call[]): string {
  const n = calls.length;
  const parts: string[] = [AGGREGATE3_SELECTOR, uint256WordHex(0x20), uint256WordHex(n)];
  const tuples: string[] = [];
  // Offsets are relative to the start of the offsets area (right after the length word).
  let offset = 32 * n;
  const offsets: string[] = [];
  for (const call of calls) {
    const data = bareHex(call.data);
    const tuple =
      addressWordHex(call.target) + CALL3_FIXED_WORDS + uint256WordHex(data.length / 2) + padHexToWords(data);
    offsets.push(uint256WordHex(offset));
    tuples.push(tuple);
    offset += tuple.length / 2;
  }
  return '0x' + parts.join('') + offsets.join('') + tuples.join('');
}

/** Reads a word as a JS number, refusing values that cannot be a sane offset or length. */
export function readAbiSmall(hex: string, byteOffset: number): number {
  const start = byteOffset * 2;
  if (start + 64 > hex.length) throw new Error('abi decode: out of bounds');
  const word = hex.slice(start, start + 64);
  // Offsets and lengths fit comfortably in 6 bytes; anything bigger is malformed data.
  if (!word.startsWith('0'.repeat(52))) throw new Error('abi decode: offset or length too large');
  return parseInt(word.slice(52), 16);
}

/**
 * Decodes the return data of `aggregate3`: `(bool success, bytes returnData)[]`, which must
 * hold exactly `expected` results. Every length the data declares is checked against the
 * data's own size (and the count against `expected`) before anything is allocated for it:
 * the node chooses these numbers.
 *
 * @throws Error on malformed or truncated data (never returns a partial result)
 */
export function decodeAggregate3(returnData: string, expected: number): CallResult[] {
  const hex = bareHex(returnData);
  const base = readAbiSmall(hex, 0);
  const n = readAbiSmall(hex, base);
  if (n !== expected) throw new Error(`abi decode: ${n} results for ${expected} calls`);
  const area = base + 32;
  // Each result needs at least its offset word and its two head words.
  if ((area + 96 * n) * 2 > hex.length) throw new Error('abi decode: out of bounds');
  const out: CallResult[] = [];
  for (let i = 0; i < n; i++) {
    const tuple = area + readAbiSmall(hex, area + 32 * i);
    const successWord = hex.slice(tuple * 2, tuple * 2 + 64);
    if (successWord.length !== 64) throw new Error('abi decode: out of bounds');
    // A bool is 0 or 1: any other word is not Multicall3's answer.
    if (successWord !== ZERO_WORD && successWord !== ONE_WORD) throw new Error('abi decode: not a bool');
    const dataAt = tuple + readAbiSmall(hex, tuple + 32);
    const length = readAbiSmall(hex, dataAt);
    const start = (dataAt + 32) * 2;
    if (start + length * 2 > hex.length) throw new Error('abi decode: out of bounds');
    out.push({ success: successWord !== ZERO_WORD, data: '0x' + hex.slice(start, start + length * 2) });
  }
  return out;
}
