/**
 * The orderbook a pair SHOULD have, computed without the indexer: samples from the reference
 * replica of the router's pricing (@pmm/contracts reference-curve), bounded by the reserves
 * exactly as the router bounds them, then the protocol's levelsFromSamples.
 */
import { CurveError, quoteOut, type RouterCurve } from '@pmm/contracts';
import { levelsFromSamples, type PairOrderbook, type QuoteSample } from '@pmm/protocol';

export interface Token {
  address: string;
  decimals: number;
}

/** The ladder's samples the router would return, stopping at its first revert. */
export function predictSamples(
  curve: RouterCurve,
  side: 'bid' | 'ask',
  amounts: readonly bigint[],
  reserveOut: bigint,
): QuoteSample[] {
  const out: QuoteSample[] = [];
  for (const amountIn of amounts) {
    try {
      out.push({ amountIn, amountOut: quoteOut(curve, side, amountIn, reserveOut) });
    } catch (err) {
      if (err instanceof CurveError) break;
      throw err;
    }
  }
  return out;
}

export function predictPairBook(
  base: Token,
  quote: Token,
  curve: RouterCurve,
  ladder: { asks: readonly bigint[]; bids: readonly bigint[] },
  reserves: { base: bigint; quote: bigint },
): PairOrderbook {
  return {
    baseToken: base.address,
    quoteToken: quote.address,
    bids: levelsFromSamples(
      'bid',
      predictSamples(curve, 'bid', ladder.bids, reserves.quote),
      base.decimals,
      quote.decimals,
    ),
    asks: levelsFromSamples(
      'ask',
      predictSamples(curve, 'ask', ladder.asks, reserves.base),
      base.decimals,
      quote.decimals,
    ),
  };
}
