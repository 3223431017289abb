/**
 * The API's `calldata` (spec 2.3): a call of the router's
 * `swap(address tokenIn, uint256 amountIn, address tokenOut, uint256 minOutAmount,
 * uint256 quoteTimestamp, bytes verificationData)`, i.e. the 4-byte selector followed by
 * six head words (the last is the offset 0xc0 of the bytes), the bytes length, and the
 * verificationData right-padded with zeros to whole words.
 */
import { keccak256 } from './keccak256';
import {
  WORD_BYTES,
  bytesToHex,
  hexToBytes,
  paddedLength,
  writeAddressWord,
  writeLengthWord,
  writeUint256Word,
} from './abi-words';

/** The canonical signature the selector is derived from. */
export const SWAP_SIGNATURE = 'swap(address,uint256,address,uint256,uint256,bytes)';

const SELECTOR_BYTES = keccak256(new TextEncoder().encode(SWAP_SIGNATURE)).subarray(0, 4);

/** `0x` + 8 hex digits: the first 4 bytes of keccak256(`SWAP_SIGNATURE`). */
export const SWAP_SELECTOR = bytesToHex(SELECTOR_BYTES);

/** The arguments of `swap`, in call order. */
export interface SwapCallArgs {
  tokenIn: string;
  amountIn: bigint;
  tokenOut: string;
  minAmountOut: bigint;
  /** The API's `timestamp` (Unix seconds), passed unchanged. */
  quoteTimestamp: bigint;
  /** The API's `verificationData`, `0x` hex of any length, passed unchanged. */
  verificationData: string;
}

/** Offset of the `bytes` tail, counted from after the selector: right after six head words. */
const BYTES_OFFSET = 6 * WORD_BYTES;

/**
 * `0x` hex of the calldata of `swap(...)` with these arguments.
 * Throws a plain Error on an out-of-range number, a malformed address or invalid hex.
 */
export function encodeSwapCalldata(args: SwapCallArgs): string {
  const data = hexToBytes(args.verificationData);
  const buf = new Uint8Array(4 + BYTES_OFFSET + WORD_BYTES + paddedLength(data.length));
  buf.set(SELECTOR_BYTES, 0);
  writeAddressWord(buf, 4, args.tokenIn);
  writeUint256Word(buf, 4 + 32, args.amountIn);
  writeAddressWord(buf, 4 + 64, args.tokenOut);
  writeUint256Word(buf, 4 + 96, args.minAmountOut);
  writeUint256Word(buf, 4 + 128, args.quoteTimestamp);
  writeLengthWord(buf, 4 + 160, BYTES_OFFSET);
  writeLengthWord(buf, 4 + BYTES_OFFSET, data.length);
  buf.set(data, 4 + BYTES_OFFSET + WORD_BYTES); // padding stays zero (fresh buffer)
  return bytesToHex(buf);
}
