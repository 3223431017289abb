/**
 * The API's `calldata` (spec 2.3): a call of the router's
 * `swap(address tokenIn, uint256 amountIn, address tokenOut, uint256 minOutAmount,
 * uint256 quoteTimestamp, bytes verificationData)`, i.e. the 4-byte selector followed by
 * six head words (the last is the offset 0xc0 of the bytes), the bytes length, and the
 * verificationData right-padded with zeros to whole words.
 */
import {
  WORD_BYTES,
  bytesToHex,
  functionSelector,
  hexToBytes,
  paddedLength,
  writeAddressWord,
  writeLengthWord,
  writeUint256Word,
} from './abi-words';

/** The canonical signature the selector is derived from. */
export const SWAP_SIGNATURE = 'swap(address,uint256,address,uint256,uint256,bytes)';

/** `0x` + 8 hex digits: the first 4 bytes of keccak256(`SWAP_SIGNATURE`). */
export const SWAP_SELECTOR = functionSelector(SWAP_SIGNATURE);
const SELECTOR_BYTES = hexToBytes(SWAP_SELECTOR);

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

function readWord(buf: Uint8Array, offset: number): bigint {
  if (offset + WORD_BYTES > buf.length) throw new Error('swap calldata: too short');
  return BigInt(bytesToHex(buf.subarray(offset, offset + WORD_BYTES)));
}

function readAddress(buf: Uint8Array, offset: number): string {
  const word = readWord(buf, offset);
  if (word >> 160n !== 0n) throw new Error('swap calldata: address has dirty high bytes');
  return `0x${word.toString(16).padStart(40, '0')}`;
}

/**
 * Decodes the calldata of any call of `swap(...)` (ours or another encoder's: the bytes offset
 * is read, not assumed; trailing bytes are ignored as the EVM does). Addresses come back
 * lowercase, verificationData as lowercase hex. Throws a plain Error when the selector is not
 * `swap`'s or the data is truncated.
 */
export function decodeSwapCalldata(hex: string): SwapCallArgs {
  const buf = hexToBytes(hex);
  if (buf.length < 4 || bytesToHex(buf.subarray(0, 4)) !== SWAP_SELECTOR)
    throw new Error('swap calldata: not a swap call');
  const args = buf.subarray(4);
  const offset = readWord(args, 160);
  if (offset > BigInt(args.length)) throw new Error('swap calldata: bytes offset out of range');
  const length = readWord(args, Number(offset));
  const start = Number(offset) + WORD_BYTES;
  if (length > BigInt(args.length - start)) throw new Error('swap calldata: bytes length out of range');
  return {
    tokenIn: readAddress(args, 0),
    amountIn: readWord(args, 32),
    tokenOut: readAddress(args, 64),
    minAmountOut: readWord(args, 96),
    quoteTimestamp: readWord(args, 128),
    verificationData: bytesToHex(args.subarray(start, start + Number(length))),
  };
}
