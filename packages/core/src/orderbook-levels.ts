/**
 * From `quote()` samples to orderbook levels (ARCHITECTURE.md "Orderbook from chain state").
 *
 * The indexer samples the router's `quote()` at an increasing ladder of input amounts; each
 * level is the marginal step between two consecutive samples. All arithmetic is on bigints;
 * the only rounding is the price's, and it always goes against the taker.
 */
import type { OrderbookLevel } from './orderbook';
import { formatUnits, parseUnits, scaleRatio } from './decimal';

/** One `quote()` result, in raw token units. */
export interface QuoteSample {
  amountIn: bigint;
  amountOut: bigint;
}

export type BookSide = 'bid' | 'ask';

export interface LevelOptions {
  /** Decimal places of the price strings. Default 18. */
  priceDecimals?: number;
}

export const DEFAULT_PRICE_DECIMALS = 18;

function assertDecimals(value: number, what: string): void {
  if (!Number.isSafeInteger(value) || value < 0)
    throw new RangeError(`${what} must be a non-negative integer, got ${value}`);
}

/**
 * Turns a ladder of `quote()` samples into the levels of one book side.
 *
 * - asks (the maker sells base): sample input = quote token, output = base token;
 *   bids (the maker buys base): input = base token, output = quote token.
 * - Level i is the step from sample i−1 to sample i (sample −1 is (0, 0)):
 *   amount = Δbase in human units (exact), price = Δquote / Δbase in quote per base, human units,
 *   i.e. Δquote·10^baseDecimals / (Δbase·10^quoteDecimals), rounded to `priceDecimals` places
 *   against the taker: bids down, asks up.
 * - A step that gives the taker nothing (asks: Δbase = 0, bids: Δquote = 0) has no finite or no
 *   useful price (asks: infinite, bids: zero). Dropping it outright would hide what the taker
 *   pays for it, and showing it would show a bid at price 0. Instead its input is carried into
 *   the next step that gives the taker something, so that step's level includes it and its
 *   price is the average over both, rounded against the taker as always. Trailing steps of that
 *   kind are dropped: past them the maker gives nothing more. Steps with no change at all
 *   (duplicate samples) are simply dropped.
 * - The caller truncates the ladder at the first failing sample and at the reserves. A ladder
 *   that is not monotonic (amountIn or amountOut decreasing, or more output for the same input)
 *   is not a quote curve: the levels stop before the first such sample instead of throwing,
 *   so that one odd sample cannot take down the whole book.
 * - Sorted best first: bids by price descending, asks ascending; equal prices keep ladder order.
 *
 * INVARIANT: for a monotonic ladder, the level amounts sum exactly to the base amount of the
 * last sample that gave the taker something, and Σ price × amount is ≥ (asks) or ≤ (bids) its
 * quote amount, by less than one price unit (10^−priceDecimals) per level.
 */
export function levelsFromSamples(
  side: BookSide,
  samples: readonly QuoteSample[],
  baseDecimals: number,
  quoteDecimals: number,
  opts: LevelOptions = {},
): OrderbookLevel[] {
  const priceDecimals = opts.priceDecimals ?? DEFAULT_PRICE_DECIMALS;
  assertDecimals(baseDecimals, 'baseDecimals');
  assertDecimals(quoteDecimals, 'quoteDecimals');
  assertDecimals(priceDecimals, 'priceDecimals');
  const baseScale = 10n ** BigInt(baseDecimals);
  const quoteScale = 10n ** BigInt(quoteDecimals);
  const rounding = side === 'bid' ? 'down' : 'up';

  const levels: { scaledPrice: bigint; level: OrderbookLevel }[] = [];
  let prevIn = 0n;
  let prevOut = 0n;
  let carriedIn = 0n;
  for (const sample of samples) {
    const dIn = sample.amountIn - prevIn;
    const dOut = sample.amountOut - prevOut;
    if (dIn < 0n || dOut < 0n || (dIn === 0n && dOut > 0n)) break;
    prevIn = sample.amountIn;
    prevOut = sample.amountOut;
    if (dOut === 0n) {
      carriedIn += dIn;
      continue;
    }
    const stepIn = dIn + carriedIn;
    carriedIn = 0n;
    const dBase = side === 'ask' ? dOut : stepIn;
    const dQuote = side === 'ask' ? stepIn : dOut;
    const scaledPrice = scaleRatio(dQuote * baseScale, dBase * quoteScale, priceDecimals, rounding);
    levels.push({
      scaledPrice,
      level: { price: formatUnits(scaledPrice, priceDecimals), amount: formatUnits(dBase, baseDecimals) },
    });
  }

  // Array.prototype.sort is stable (ES2019), so equal prices keep ladder order.
  levels.sort((a, b) => {
    const diff = side === 'bid' ? b.scaledPrice - a.scaledPrice : a.scaledPrice - b.scaledPrice;
    return diff > 0n ? 1 : diff < 0n ? -1 : 0;
  });
  return levels.map((l) => l.level);
}

/** Levels summed back into raw token units; see {@link summarizeLevels}. */
export interface LevelsSummary {
  /** Σ amount, in raw base units (exact). */
  base: bigint;
  /** Σ price × amount in raw quote units is exactly `quoteNumerator / quoteDenominator`. */
  quoteNumerator: bigint;
  quoteDenominator: bigint;
  /** Σ price × amount in raw quote units, rounded down. */
  quoteFloor: bigint;
  /** Σ price × amount in raw quote units, rounded up. */
  quoteCeil: bigint;
}

/**
 * Sums levels back into raw token units: the base they offer and the quote they cost (asks) or
 * pay (bids) at their stated prices. Used to check a book against the `quote()` samples.
 *
 * @throws RangeError if a price or amount needs more places than `priceDecimals`/`baseDecimals`
 */
export function summarizeLevels(
  levels: readonly OrderbookLevel[],
  baseDecimals: number,
  quoteDecimals: number,
  opts: LevelOptions = {},
): LevelsSummary {
  const priceDecimals = opts.priceDecimals ?? DEFAULT_PRICE_DECIMALS;
  let base = 0n;
  let priceTimesBase = 0n;
  for (const level of levels) {
    const amount = parseUnits(level.amount, baseDecimals);
    base += amount;
    priceTimesBase += parseUnits(level.price, priceDecimals) * amount;
  }
  // Σ price·amount (human quote) = priceTimesBase / 10^(priceDecimals + baseDecimals);
  // in raw quote units, times 10^quoteDecimals.
  const quoteNumerator = priceTimesBase * 10n ** BigInt(quoteDecimals);
  const quoteDenominator = 10n ** BigInt(priceDecimals + baseDecimals);
  const quoteFloor = quoteNumerator / quoteDenominator;
  const quoteCeil = quoteFloor * quoteDenominator === quoteNumerator ? quoteFloor : quoteFloor + 1n;
  return { base, quoteNumerator, quoteDenominator, quoteFloor, quoteCeil };
}
