/**
 * Calldata of the router's on-chain quote,
 * `quote(address tokenIn, uint256 amountIn, address tokenOut, uint256 timestampInMilisec, bytes sig)`:
 * the indexer's per-block ladders and the signer's firm quotes. Written word by word as hex
 * (the indexer builds ~1,200 per block: docs/decisions/0060-abi-codecs.md); checked byte for byte
 * against ethers and viem in the indexer's call-codec test.
 */
import { addressWordHex, bareHex, functionSelector, padHexToWords, uint256WordHex } from './abi-words';

/** The selector as 8 bare hex digits (no `0x`). */
export const QUOTE_SELECTOR = functionSelector('quote(address,uint256,address,uint256,bytes)').slice(2);

/**
 * A `quote()` calldata builder for one (tokenIn, tokenOut, timestamp, signature): only
 * `amountIn` varies along the ladder, so the rest is encoded once.
 */
export function quoteCalldataBuilder(p: {
  tokenIn: string;
  tokenOut: string;
  timestampInMilisec: bigint;
  signature: string;
}): (amountIn: bigint) => string {
  const sig = bareHex(p.signature);
  const head = '0x' + QUOTE_SELECTOR + addressWordHex(p.tokenIn);
  // tokenOut, timestamp, offset of `sig` (5 head words = 0xa0), its length, its bytes.
  const tail =
    addressWordHex(p.tokenOut) +
    uint256WordHex(p.timestampInMilisec) +
    uint256WordHex(0xa0) +
    uint256WordHex(sig.length / 2) +
    padHexToWords(sig);
  return (amountIn) => head + uint256WordHex(amountIn) + tail;
}
