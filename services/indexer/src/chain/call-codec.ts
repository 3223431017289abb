/**
 * The ABI codec of the per-block call (block-quotes.ts): the helper's `getReserveBalances`
 * in and out, and Multicall3 `aggregate3` (re-exported from @pmm/protocol's aggregate3.ts, which
 * the signer's firm quotes share; `quote()` calldata: @pmm/protocol's quote-calldata.ts). With 50 pairs the block call holds ~1,200 `quote()`s; `npm run bench call-codec` measured ethers' Interface at 70-100
 * times the CPU of this codec for that work (about 0.8 s against 8 ms of CPU per block
 * with 50 pairs), so the per-block layouts, which are fixed, are written word by word as hex (the
 * words: @pmm/protocol's abi-words). Every function here is checked byte for byte against
 * ethers and viem in test/call-codec.test.ts. The registry reads (once per registry change,
 * dynamic strings and arrays) use ethers' Interface (contract-abis.ts): see
 * docs/decisions/0060-abi-codecs.md.
 *
 * Hex strings here are lowercase, `0x`-prefixed at the boundaries, bare inside.
 */
import {
  addressWordHex,
  bareHex,
  functionSelector,
  readAbiSmall as readSmall,
  uint256WordHex,
  type CallResult,
} from '@pmm/protocol';

// Multicall3 `aggregate3` in and out is protocol's (the signer's firm quotes batch with it too).
export { AGGREGATE3_SELECTOR, decodeAggregate3, encodeAggregate3, type Call, type CallResult } from '@pmm/protocol';

const selector = (signature: string): string => functionSelector(signature).slice(2);

export const RESERVE_BALANCES_SELECTOR = selector('getReserveBalances(address[])');

/** Calldata of the helper's `getReserveBalances(address[] tokens)`. */
export function reserveBalancesCalldata(tokens: readonly string[]): string {
  let out = '0x' + RESERVE_BALANCES_SELECTOR + uint256WordHex(0x20) + uint256WordHex(tokens.length);
  for (const token of tokens) out += addressWordHex(token);
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
