/**
 * The digest the API signs for `swap` (spec 2.3, signing rule 1):
 * keccak256(abi.encode(address tokenIn, address tokenOut, uint256 timestamp, uint256 fee,
 * uint256 originRate, address userAddress)). No EIP-191 prefix: the router recovers the
 * signer from this hash directly. The chain id is deliberately not part of it (rule 3).
 */
import { keccak256 } from '../abi/keccak256';
import { WORD_BYTES, writeAddressWord, writeUint256Word } from '../abi/abi-words';

/** The six signed fields of a swap quote, in the order they are encoded. */
export interface SwapQuoteFields {
  tokenIn: string;
  tokenOut: string;
  /** Unix seconds at which the quote was signed (the API's `timestamp`). */
  timestamp: bigint;
  /** Fee in 1/100000 units (the router pays `out × (100000 − fee) / 100000`). */
  fee: bigint;
  /** Opaque operator-configured value, signed and emitted by the router (docs/decisions/0009-originrate.md). */
  originRate: bigint;
  userAddress: string;
}

/** Bytes of `abi.encode` of the six static fields: six words, no dynamic tail. */
export const SWAP_DIGEST_PREIMAGE_BYTES = 6 * WORD_BYTES;

/**
 * `abi.encode(tokenIn, tokenOut, timestamp, fee, originRate, userAddress)`, exactly
 * 192 bytes. Exposed so that tests and tooling can see the preimage; the hot path calls
 * {@link swapDigest}. Throws a plain Error on an out-of-range number or a malformed address.
 */
export function encodeSwapDigestPreimage(f: SwapQuoteFields): Uint8Array {
  const buf = new Uint8Array(SWAP_DIGEST_PREIMAGE_BYTES);
  writeAddressWord(buf, 0, f.tokenIn);
  writeAddressWord(buf, 32, f.tokenOut);
  writeUint256Word(buf, 64, f.timestamp);
  writeUint256Word(buf, 96, f.fee);
  writeUint256Word(buf, 128, f.originRate);
  writeAddressWord(buf, 160, f.userAddress);
  return buf;
}

/** The 32-byte digest a swap quote signature covers (see the file comment). */
export function swapDigest(f: SwapQuoteFields): Uint8Array {
  return keccak256(encodeSwapDigestPreimage(f));
}
