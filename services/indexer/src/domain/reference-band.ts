/**
 * A pair's standing against its reference after one computed block: the band logic, pure.
 *
 * - The reference must be readable: a feed that reverted or answered another shape (no answer), a
 *   price not above zero, a round older than the last one accepted (its id or its updatedAt going
 *   back), an updatedAt of 0 or later than the block's time: `unreadable`.
 * - It must be fresh: older than `maxAgeSeconds` at the block's time: `stale`.
 * - The book must price the pair: its mid is the best bid and best ask averaged (one of them when
 *   the other side is empty); none: `no_curve`.
 * - The mid's deviation from the reference, in bps, must be within −maxDeviationBelowBps …
 *   +maxDeviationAboveBps: else `out_of_band`.
 *
 * Anything but `in_band` stops serving the pair in the block that shows it. A pair not served is
 * served again once `recoveryBlocks` consecutive computed blocks are in band. A pair seen for the
 * first time (no record: the indexer's first block, or the record expired with the book) is
 * served when in band: there is no breach to recover from. In `watch` mode the same standing is
 * kept and reported, but the pair is never withheld.
 */
import type { BandRecord, PairBandState, ReferenceBand } from '@pmm/core';
import type { PairOrderbook } from '@pmm/protocol';
import type { TrackedPairs } from '../chain/block-quotes';
import type { FeedAnswer } from '../chain/feed-answer';

export interface BandInput {
  /** The feed's answer at the block (undefined: the calls failed or answered another shape). */
  feed: FeedAnswer | undefined;
  /** The pair's book at the block (its prices in quote tokens per base token). */
  book: Pick<PairOrderbook, 'bids' | 'asks'>;
  blockNumber: number;
  /** Unix s. */
  blockTime: number;
  /** Seconds between computed blocks, usually (for a withheld pair's Retry-After). */
  blockSeconds: number;
}

/** The book's mid (best bid and ask averaged; one side when the other is empty), undefined without levels. */
export function bookMid(book: BandInput['book']): number | undefined {
  const bid = book.bids[0] ? Number(book.bids[0].price) : undefined;
  const ask = book.asks[0] ? Number(book.asks[0].price) : undefined;
  const mid = bid !== undefined && ask !== undefined ? (bid + ask) / 2 : (bid ?? ask);
  return mid !== undefined && Number.isFinite(mid) && mid > 0 ? mid : undefined;
}

/** A feed answer as a price (quote tokens per base token). */
export function referencePrice(feed: FeedAnswer): number {
  return Number(feed.answer) / 10 ** feed.decimals;
}

/** Whether `feed` may be believed after `previous` at a block of time `blockTime` (see the module comment). */
function readable(
  feed: FeedAnswer | undefined,
  previous: PairBandState | undefined,
  blockTime: number,
): feed is FeedAnswer {
  if (!feed || feed.answer <= 0n || feed.updatedAt === 0 || feed.updatedAt > blockTime) return false;
  if (previous?.roundId !== undefined && feed.roundId < BigInt(previous.roundId)) return false;
  if (previous?.updatedAt !== undefined && feed.updatedAt < previous.updatedAt) return false;
  return true;
}

export function nextBandState(
  previous: PairBandState | undefined,
  input: BandInput,
  band: ReferenceBand,
): PairBandState {
  const { feed, blockTime } = input;
  const curvePrice = bookMid(input.book);
  const measured: Partial<PairBandState> = { curvePrice };
  let status: PairBandState['status'];
  if (!readable(feed, previous, blockTime)) status = 'unreadable';
  else {
    const reference = referencePrice(feed);
    Object.assign(measured, {
      referencePrice: reference,
      ageSeconds: blockTime - feed.updatedAt,
      roundId: feed.roundId.toString(),
      updatedAt: feed.updatedAt,
    });
    if (curvePrice !== undefined) measured.deviationBps = (curvePrice / reference - 1) * 10_000;
    if (blockTime - feed.updatedAt > band.maxAgeSeconds) status = 'stale';
    else if (measured.deviationBps === undefined) status = 'no_curve';
    else if (measured.deviationBps < -band.maxDeviationBelowBps || measured.deviationBps > band.maxDeviationAboveBps)
      status = 'out_of_band';
    else status = 'in_band';
  }
  const inBand = status === 'in_band';
  let served: boolean;
  let streak = 0;
  if (!previous || previous.served) served = inBand;
  else {
    streak = inBand ? previous.streak + 1 : 0;
    served = streak >= band.recoveryBlocks;
    if (served) streak = 0;
  }
  const since = previous && previous.served === served ? previous.since : input.blockNumber;
  const withheld = band.mode === 'enforce' && !served;
  return {
    status,
    mode: band.mode,
    withheld,
    served,
    streak,
    since,
    maxDeviationBelowBps: band.maxDeviationBelowBps,
    maxDeviationAboveBps: band.maxDeviationAboveBps,
    // A round already accepted stays the floor while the feed is unreadable.
    roundId: previous?.roundId,
    updatedAt: previous?.updatedAt,
    ...measured,
    ...(withheld
      ? { retryAfterSeconds: Math.max(1, Math.ceil((band.recoveryBlocks - streak) * input.blockSeconds)) }
      : {}),
  };
}

/**
 * The standing of every pair with a reference after a block (registry order of `books` and
 * `feeds`, as decoded from the block call), from the record written with the previous book;
 * undefined when no pair has a reference.
 */
export function blockBandRecord(
  tracked: TrackedPairs,
  books: readonly PairOrderbook[],
  feeds: readonly (FeedAnswer | undefined)[],
  previous: BandRecord | undefined,
  block: { number: number; timestamp: number },
): BandRecord | undefined {
  if (!tracked.pairs.some((p) => p.reference)) return undefined;
  // Seconds per block, from the previous record (the Retry-After of a withheld pair); 1 without.
  const span = previous ? block.number - previous.block : 0;
  const perBlock = span > 0 ? (block.timestamp - previous!.time) / span : 1;
  const blockSeconds = Number.isFinite(perBlock) && perBlock > 0 ? perBlock : 1;
  const pairs: Record<string, PairBandState> = {};
  tracked.pairs.forEach((p, i) => {
    const book = books[i];
    if (!p.reference || !book) return;
    const base = p.base.address.toLowerCase();
    pairs[base] = nextBandState(
      previous?.pairs[base],
      { feed: feeds[i], book, blockNumber: block.number, blockTime: block.timestamp, blockSeconds },
      p.reference.band,
    );
  });
  return { block: block.number, time: block.timestamp, pairs };
}
