/**
 * Markouts: how the market moved after each executed swap, from the maker's side. At horizon h,
 * side × (mid at t+h − execution price) / execution price, in basis points, and the same move
 * times the base amount in quote units; side is +1 when the maker bought the base token (`bid`),
 * −1 when it sold it (`ask`): negative means the maker lost (the flow was informed).
 *
 * The mid is the midpoint of the book's best bid and best ask (the mid history, core's
 * mid-history.ts): the maker's own. Beside it, the same markout is taken against the pair's
 * reference at t+h (its feed's answer at that block, kept in the same history): a curve that
 * stopped moving while the market moved marks its own losses at zero against its own mid, and at
 * what they are against the reference. A pair without a reference (or whose feed could not be
 * believed at t+h) has `null` reference markouts. At a block horizon (+1, +5, +25 blocks) it is the book of block n+h, or of the
 * last block before it the indexer computed (it skips blocks when busy); at a time horizon (12,
 * 60, 300 s) the book in force at t+h: the last block at or before it. A horizon the history has
 * not reached yet is `null`, and so is one whose book had an empty side.
 *
 * A swap with a zero leg (the router paid nothing for a dust amount in, or took nothing) has no
 * price, hence no markout, ever: each of its horizons holds {@link NO_MARKOUT_ZERO_LEG}, and it
 * counts in no mean. No function here returns a markout that is not a finite number.
 */
import { midOf, referenceOf, type LedgerEntry, type MidRecord } from '@pmm/core';

export type HorizonKey = '1b' | '5b' | '25b' | '12s' | '60s' | '300s';

export interface Horizon {
  key: HorizonKey;
  blocks?: number;
  seconds?: number;
}

export const HORIZONS: readonly Horizon[] = [
  { key: '1b', blocks: 1 },
  { key: '5b', blocks: 5 },
  { key: '25b', blocks: 25 },
  { key: '12s', seconds: 12 },
  { key: '60s', seconds: 60 },
  { key: '300s', seconds: 300 },
];

/** What a zero-leg swap holds in place of each markout (the report's JSON, CSV and table say it). */
export const NO_MARKOUT_ZERO_LEG = 'no markout: zero leg';
export type NoMarkout = typeof NO_MARKOUT_ZERO_LEG;

/** By horizon: the markout, null until it can be read, or the marker of a swap that has none. */
export type Markouts = Record<HorizonKey, number | null | NoMarkout>;

/** +1 when the maker bought the base token, −1 when it sold it. */
export const sideSign = (side: LedgerEntry['side']): 1 | -1 => (side === 'bid' ? 1 : -1);

type PricedEntry = Pick<LedgerEntry, 'executionPrice' | 'baseAmount' | 'quoteAmount'>;

/**
 * The swap's execution price (quote per base) when it has one: both legs above zero and a price
 * above zero. Undefined for a zero leg (a dust swap the router paid nothing for): no markout.
 */
export function markoutPrice(entry: PricedEntry): number | undefined {
  const price = Number(entry.executionPrice);
  const legs = Number(entry.baseAmount) > 0 && Number(entry.quoteAmount) > 0;
  return legs && price > 0 && Number.isFinite(price) ? price : undefined;
}

const finite = (v: number): number | undefined => (Number.isFinite(v) ? v : undefined);

/** The markout of a swap at `mid`, basis points; undefined when the swap has no price (zero leg) or the mid is not a number. */
export function markoutBps(entry: Pick<LedgerEntry, 'side'> & PricedEntry, mid: number): number | undefined {
  const price = markoutPrice(entry);
  return price === undefined ? undefined : finite((sideSign(entry.side) * (mid - price) * 10_000) / price);
}

/** The markout of a swap at `mid`, in quote-token units; undefined as {@link markoutBps}. */
export function markoutQuote(entry: Pick<LedgerEntry, 'side'> & PricedEntry, mid: number): number | undefined {
  const price = markoutPrice(entry);
  return price === undefined ? undefined : finite(sideSign(entry.side) * (mid - price) * Number(entry.baseAmount));
}

/** Where a horizon's book is: a block, or a time (Unix s). */
export type MarkoutTarget = { block: number } | { time: number };

/** The block or the time whose book horizon `h` reads for a swap. */
export function markoutTarget(entry: Pick<LedgerEntry, 'blockNumber' | 'blockTime'>, h: Horizon): MarkoutTarget {
  return h.blocks !== undefined ? { block: entry.blockNumber + h.blocks } : { time: entry.blockTime + h.seconds! };
}

/** Whether a mid history whose newest record is `latest` has reached `target`. */
export function targetReached(latest: Pick<MidRecord, 'block' | 'time'>, target: MarkoutTarget): boolean {
  return 'block' in target ? latest.block >= target.block : latest.time >= target.time;
}

/**
 * The book a horizon reads, from a chain's mid history sorted by block: the last record at or
 * before the target block or time, once the history has reached the target; else undefined.
 */
export function recordAt(history: readonly MidRecord[], target: MarkoutTarget): MidRecord | undefined {
  const last = history[history.length - 1];
  if (!last || !targetReached(last, target)) return undefined;
  const before = (r: MidRecord) => ('block' in target ? r.block <= target.block : r.time <= target.time);
  // Binary search for the last record at or before the target.
  let lo = 0;
  let hi = history.length - 1;
  let found: MidRecord | undefined;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (before(history[mid]!)) {
      found = history[mid];
      lo = mid + 1;
    } else hi = mid - 1;
  }
  return found;
}

/** What a markout is taken against: the maker's own mid (the book's), or the pair's reference. */
export type MarkoutBasis = 'mid' | 'reference';

/** The price a record gives `base` on `basis`; undefined when it has none. */
export function markAt(record: MidRecord, base: string, basis: MarkoutBasis): number | undefined {
  return basis === 'mid' ? midOf(record, base) : referenceOf(record, base);
}

/**
 * Every horizon's markout of one swap against `basis` (bps, or null), and the same in quote
 * units; the marker at every horizon for a zero leg.
 */
export function swapMarkouts(
  entry: LedgerEntry,
  history: readonly MidRecord[],
  basis: MarkoutBasis = 'mid',
): { bps: Markouts; quote: Markouts } {
  const bps = {} as Markouts;
  const quote = {} as Markouts;
  const priced = markoutPrice(entry) !== undefined;
  for (const h of HORIZONS) {
    if (!priced) {
      bps[h.key] = quote[h.key] = NO_MARKOUT_ZERO_LEG;
      continue;
    }
    const record = recordAt(history, markoutTarget(entry, h));
    const mid = record ? markAt(record, entry.base, basis) : undefined;
    bps[h.key] = (mid === undefined ? undefined : markoutBps(entry, mid)) ?? null;
    quote[h.key] = (mid === undefined ? undefined : markoutQuote(entry, mid)) ?? null;
  }
  return { bps, quote };
}

/** Executed versus quoted, basis points of the quote (positive: the taker got more), when the swap had a firm quote. */
export function quotedGapBps(entry: Pick<LedgerEntry, 'amountOut' | 'quotedAmountOut'>): number | null {
  if (entry.quotedAmountOut === undefined || entry.quotedAmountOut === '0') return null;
  const quoted = Number(entry.quotedAmountOut);
  const gap = ((Number(entry.amountOut) - quoted) * 10_000) / quoted;
  return Number.isFinite(gap) ? gap : null;
}
