/**
 * From `quote()` samples to orderbook levels (docs/decisions/0033-orderbook-from-chain-state.md).
 *
 * The indexer samples the router's `quote()` at an increasing ladder of input amounts; each
 * level is one or more consecutive marginal steps of that ladder. All arithmetic is on bigints;
 * the only rounding is the price's, and it always goes against the taker.
 */
import type { OrderbookLevel } from './orderbook';
import {
  assertDecimals,
  compareDecimals,
  formatUnits,
  parseDecimal,
  parseUnits,
  roundSignificant,
  type ScaledDecimal,
} from '../units/decimal';

/** One `quote()` result, in raw token units. */
export interface QuoteSample {
  amountIn: bigint;
  amountOut: bigint;
}

export type BookSide = 'bid' | 'ask';

export interface LevelOptions {
  /** Significant digits of the price strings. Default {@link DEFAULT_PRICE_DIGITS}. */
  priceDigits?: number;
}

/**
 * 12 significant digits: finer than any tick a trader reads (a 3000 USDC price to the
 * 100-millionth of a cent), coarse enough that the step between two integer-rounded samples
 * does not show as noise, and a relative error below 1e-11 per level.
 */
export const DEFAULT_PRICE_DIGITS = 12;

/** A run of consecutive ladder steps, in raw units. */
interface Step {
  dBase: bigint;
  dQuote: bigint;
}

/** Whether `later` gives the taker at least as good a price as `earlier` (exact, cross-multiplied). */
function notWorse(side: BookSide, earlier: Step, later: Step): boolean {
  const earlierPrice = earlier.dQuote * later.dBase;
  const laterPrice = later.dQuote * earlier.dBase;
  return side === 'ask' ? laterPrice <= earlierPrice : laterPrice >= earlierPrice;
}

/**
 * Turns a ladder of `quote()` samples into the levels of one book side, best first.
 *
 * - asks (the maker sells base): sample input = quote token, output = base token;
 *   bids (the maker buys base): input = base token, output = quote token.
 * - Each step from sample i−1 to sample i (sample −1 is (0, 0)) has Δbase and Δquote. A level's
 *   amount is its Δbase in human units (exact); its price is Δquote / Δbase in quote per base,
 *   human units, rounded to `priceDigits` significant digits against the taker: bids down, asks
 *   up.
 * - Every level is a run of consecutive steps, so every prefix of levels ends on a ladder point:
 *   a step whose price is not worse than the level before it is merged into that level (their
 *   average price), and so are adjacent levels whose rounded prices are equal. For the usual
 *   curve (worse prices deeper) the first rule only merges equal prices; for an odd one it keeps
 *   the book from showing a cheap step ahead of the dearer step that the router makes the taker
 *   go through first.
 * - A step that gives the taker nothing (asks: Δbase = 0, bids: Δquote = 0) has its input carried
 *   into the next step that gives something; trailing ones are dropped, and so are duplicate
 *   samples.
 * - The caller truncates the ladder at the first failing sample and at the reserves. A ladder
 *   that is not monotonic (amountIn or amountOut decreasing, or more output for the same input)
 *   is not a quote curve: the levels stop before the first such sample instead of throwing,
 *   so that one odd sample cannot take down the whole book.
 *
 * INVARIANT: for every prefix of the levels, Σ amount is exactly the base of a ladder point, and
 * Σ price × amount is ≥ (asks) or ≤ (bids) that point's quote amount, off by less than
 * 10^(1 − priceDigits) of it: the book never promises the taker more than `quote()` delivers.
 */
export function levelsFromSamples(
  side: BookSide,
  samples: readonly QuoteSample[],
  baseDecimals: number,
  quoteDecimals: number,
  opts: LevelOptions = {},
): OrderbookLevel[] {
  const priceDigits = opts.priceDigits ?? DEFAULT_PRICE_DIGITS;
  assertDecimals(baseDecimals, 'baseDecimals');
  assertDecimals(quoteDecimals, 'quoteDecimals');
  if (!Number.isSafeInteger(priceDigits) || priceDigits < 1)
    throw new RangeError(`priceDigits must be a positive integer, got ${priceDigits}`);

  const runs: Step[] = [];
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
    let run: Step = side === 'ask' ? { dBase: dOut, dQuote: stepIn } : { dBase: stepIn, dQuote: dOut };
    // Pool adjacent violators: the new step absorbs every earlier run it does not trail.
    while (runs.length > 0 && notWorse(side, runs[runs.length - 1]!, run)) {
      const earlier = runs.pop()!;
      run = { dBase: earlier.dBase + run.dBase, dQuote: earlier.dQuote + run.dQuote };
    }
    runs.push(run);
  }

  const baseScale = 10n ** BigInt(baseDecimals);
  const quoteScale = 10n ** BigInt(quoteDecimals);
  const rounding = side === 'bid' ? 'down' : 'up';
  const levels: { price: ScaledDecimal; dBase: bigint }[] = [];
  for (const run of runs) {
    const price = roundSignificant(run.dQuote * baseScale, run.dBase * quoteScale, priceDigits, rounding);
    const last = levels[levels.length - 1];
    // Rounding is monotonic, so equal rounded prices can only be neighbours.
    if (last && compareDecimals(last.price, price) === 0) last.dBase += run.dBase;
    else levels.push({ price, dBase: run.dBase });
  }
  return levels.map((l) => ({
    price: formatUnits(l.price.units, l.price.scale),
    amount: formatUnits(l.dBase, baseDecimals),
  }));
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
 * @throws RangeError if an amount needs more places than `baseDecimals`, or a string is malformed
 */
export function summarizeLevels(
  levels: readonly OrderbookLevel[],
  baseDecimals: number,
  quoteDecimals: number,
): LevelsSummary {
  const prices = levels.map((level) => parseDecimal(level.price));
  const priceScale = Math.max(0, ...prices.map((p) => p.scale));
  let base = 0n;
  let priceTimesBase = 0n;
  levels.forEach((level, i) => {
    const amount = parseUnits(level.amount, baseDecimals);
    base += amount;
    priceTimesBase += prices[i]!.units * 10n ** BigInt(priceScale - prices[i]!.scale) * amount;
  });
  // Σ price·amount (human quote) = priceTimesBase / 10^(priceScale + baseDecimals);
  // in raw quote units, times 10^quoteDecimals.
  const quoteNumerator = priceTimesBase * 10n ** BigInt(quoteDecimals);
  const quoteDenominator = 10n ** BigInt(priceScale + baseDecimals);
  const quoteFloor = quoteNumerator / quoteDenominator;
  const quoteCeil = quoteFloor * quoteDenominator === quoteNumerator ? quoteFloor : quoteFloor + 1n;
  return { base, quoteNumerator, quoteDenominator, quoteFloor, quoteCeil };
}
