/**
 * A reference feed's answer and a router curve's mid, one in the other's units.
 *
 * A feed (Chainlink's `AggregatorV3Interface`) answers the price of ONE base token in quote
 * tokens, as an integer with the feed's own `decimals()` (8 for most USD feeds). The router's
 * mid is in raw units: quote raw per base raw × 1e18 (`midPriceX18`). So
 *
 *   midX18 = answer × 10^quoteDecimals × 1e18 / (10^feedDecimals × 10^baseDecimals)
 *
 * Both directions round down; the devnet's feed publishes from its market with one, and the
 * indexer holds the curve against the feed with the other.
 */

/** The decimals that relate a feed's answer to a pair's raw amounts. */
export interface ReferenceScale {
  feedDecimals: number;
  baseDecimals: number;
  quoteDecimals: number;
}

const pow10 = (n: number): bigint => 10n ** BigInt(n);
const X18 = pow10(18);

/** The router mid (quote raw per base raw × 1e18) of a feed answer. */
export function midX18FromFeedAnswer(answer: bigint, scale: ReferenceScale): bigint {
  return (answer * pow10(scale.quoteDecimals) * X18) / (pow10(scale.feedDecimals) * pow10(scale.baseDecimals));
}

/** The feed answer of a router mid (quote raw per base raw × 1e18). */
export function feedAnswerFromMidX18(midX18: bigint, scale: ReferenceScale): bigint {
  return (midX18 * pow10(scale.feedDecimals) * pow10(scale.baseDecimals)) / (pow10(scale.quoteDecimals) * X18);
}
