/**
 * One pair's book from the raw `quote()` results of one block (see
 * docs/decisions/0033-orderbook-from-chain-state.md). Pure: the chain layer supplies the results, this decides which
 * samples count and turns them into levels with the protocol's `levelsFromSamples`.
 */
import { levelsFromSamples, type BookSide, type PairOrderbook, type QuoteSample, type TokenInfo } from '@pmm/protocol';

/**
 * Keeps the usable prefix of a ladder: it stops at the first failing sample (`undefined`),
 * and at the first sample whose output exceeds the output token's reserve (that sample is
 * dropped: the router could not pay it). Later samples are never used, even if they
 * succeed: a book with a hole in it would misstate depth.
 */
export function usableSamples(
  amountsIn: readonly bigint[],
  amountsOut: readonly (bigint | undefined)[],
  reserveOut: bigint,
): QuoteSample[] {
  const out: QuoteSample[] = [];
  for (let i = 0; i < amountsIn.length; i++) {
    const amountIn = amountsIn[i];
    const amountOut = amountsOut[i];
    if (amountIn === undefined || amountOut === undefined || amountOut > reserveOut) break;
    out.push({ amountIn, amountOut });
  }
  return out;
}

/** The raw results of one side of one pair. */
export interface SideResults {
  amountsIn: readonly bigint[];
  /** `quote()` outputs, `undefined` where the call failed. */
  amountsOut: readonly (bigint | undefined)[];
}

/**
 * Both sides of a pair's book. Asks: input quote → base out, limited by the base reserve;
 * bids: input base → quote out, limited by the quote reserve. Bids best (highest) first,
 * asks best (lowest) first (levelsFromSamples sorts).
 */
export function pairBook(
  base: TokenInfo,
  quote: TokenInfo,
  results: { asks: SideResults; bids: SideResults },
  reserves: { base: bigint; quote: bigint },
): PairOrderbook {
  const side = (s: BookSide, r: SideResults, reserveOut: bigint) =>
    levelsFromSamples(s, usableSamples(r.amountsIn, r.amountsOut, reserveOut), base.decimals, quote.decimals);
  return {
    baseToken: base.address,
    quoteToken: quote.address,
    bids: side('bid', results.bids, reserves.quote),
    asks: side('ask', results.asks, reserves.base),
  };
}
