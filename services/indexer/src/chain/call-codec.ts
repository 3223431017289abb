/**
 * The ABI codec of the per-block call (block-quotes.ts): the helper's `getReserveBalances`
 * and Multicall3 `aggregate3` in and out (`quote()` calldata: @pmm/protocol's
 * quote-calldata.ts). With 50 pairs the block call holds ~1,200 `quote()`s; `npm run bench call-codec` measured ethers' Interface at 70-100
 * times the CPU of this codec for that work (about 0.8 s against 8 ms of CPU per block
 * with 50 pairs), so the per-block layouts, which are fixed, are written word by word as hex (the
 * words: @pmm/protocol's abi-words). Every function here is checked byte for byte against
 * ethers and viem in test/call-codec.test.ts. The registry reads (once per registry change,
 * dynamic strings and arrays) use ethers' Interface (contract-abis.ts): see
 * docs/decisions/0060-abi-codecs.md.
 *
 * Hex strings here are lowercase, `0x`-prefixed at the boundaries, bare inside.
 */
import { addressWordHex, bareHex, functionSelector, padHexToWords, uint256WordHex } from '@pmm/protocol';

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

const selector = (signature: string): string => functionSelector(signature).slice(2);

export const AGGREGATE3_SELECTOR = selector('aggregate3((address,bool,bytes)[])');
export const RESERVE_BALANCES_SELECTOR = selector('getReserveBalances(address[])');

const ZERO_WORD = '0'.repeat(64);
/** `allowFailure = true` and the offset of `callData` (3 head words): the same in every Call3 tuple. */
const CALL3_FIXED_WORDS = uint256WordHex(1) + uint256WordHex(0x60);

/** Calldata of the helper's `getReserveBalances(address[] tokens)`. */
export function reserveBalancesCalldata(tokens: readonly string[]): string {
  let out = '0x' + RESERVE_BALANCES_SELECTOR + uint256WordHex(0x20) + uint256WordHex(tokens.length);
  for (const token of tokens) out += addressWordHex(token);
  return out;
}

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
function readSmall(hex: string, byteOffset: number): number {
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
  const base = readSmall(hex, 0);
  const n = readSmall(hex, base);
  if (n !== expected) throw new Error(`abi decode: ${n} results for ${expected} calls`);
  const area = base + 32;
  // Each result needs at least its offset word and its two head words.
  if ((area + 96 * n) * 2 > hex.length) throw new Error('abi decode: out of bounds');
  const out: CallResult[] = [];
  for (let i = 0; i < n; i++) {
    const tuple = area + readSmall(hex, area + 32 * i);
    const successWord = hex.slice(tuple * 2, tuple * 2 + 64);
    if (successWord.length !== 64) throw new Error('abi decode: out of bounds');
    const dataAt = tuple + readSmall(hex, tuple + 32);
    const length = readSmall(hex, dataAt);
    const start = (dataAt + 32) * 2;
    if (start + length * 2 > hex.length) throw new Error('abi decode: out of bounds');
    out.push({ success: successWord !== ZERO_WORD, data: '0x' + hex.slice(start, start + length * 2) });
  }
  return out;
}

/**
 * Decodes a `uint256[]` return value (`getReserveBalances`).
 *
 * @throws Error on malformed or truncated data
 */
export function decodeUint256Array(returnData: string): bigint[] {
  const hex = bareHex(returnData);
  const at = readSmall(hex, 0);
  const n = readSmall(hex, at);
  const start = (at + 32) * 2;
  if (start + n * 64 > hex.length) throw new Error('abi decode: out of bounds');
  const out = new Array<bigint>(n);
  for (let i = 0; i < n; i++) out[i] = BigInt('0x' + hex.slice(start + i * 64, start + (i + 1) * 64));
  return out;
}

/** A single uint256 return value, or undefined when the data is not exactly one word. */
export function decodeUintResult(result: CallResult): bigint | undefined {
  if (!result.success || result.data.length !== 66) return undefined;
  return BigInt(result.data);
}
