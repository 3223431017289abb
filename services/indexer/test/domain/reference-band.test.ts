/**
 * The band logic (domain/reference-band.ts), pure: readable, fresh, priced, within the band; a pair
 * leaves in the block that shows a breach and is back after its recovery blocks; watch only reports.
 */
import type { PairBandState, ReferenceBand } from '@pmm/core';
import { blockBandRecord, bookMid, nextBandState, type BandInput } from '../../src/domain/reference-band';
import type { FeedAnswer } from '../../src/chain/feed-answer';
import type { TrackedPairs } from '../../src/chain/block-quotes';

const BAND: ReferenceBand = {
  maxDeviationBelowBps: 50,
  maxDeviationAboveBps: 80,
  maxAgeSeconds: 120,
  recoveryBlocks: 3,
  mode: 'enforce',
};
const T = 1_800_000_000;
const feed = (over: Partial<FeedAnswer> = {}): FeedAnswer => ({
  roundId: 10n,
  answer: 3000_00000000n,
  updatedAt: T - 10,
  decimals: 8,
  ...over,
});
/** A book whose tops average to `mid` (a spread of 5 bps each side). */
const book = (mid: number | undefined): BandInput['book'] =>
  mid === undefined
    ? { bids: [], asks: [] }
    : {
        bids: [{ price: String(mid * 0.9995), amount: '1' }],
        asks: [{ price: String(mid * 1.0005), amount: '1' }],
      };
/** `null`: the feed gave no answer in shape. */
const input = (mid: number | undefined, f: FeedAnswer | null = feed(), blockNumber = 100): BandInput => ({
  feed: f ?? undefined,
  book: book(mid),
  blockNumber,
  blockTime: T,
  blockSeconds: 2,
});

describe('nextBandState: where the pair stands', () => {
  it('behavior: within −below … +above of the reference is in band; the deviation is signed, in bps', () => {
    const at = (mid: number) => nextBandState(undefined, input(mid), BAND);
    expect(at(3000)).toMatchObject({ status: 'in_band', served: true, withheld: false, ageSeconds: 10 });
    expect(at(3000).deviationBps).toBeCloseTo(0, 6);
    expect(at(2985.3).status).toBe('in_band'); // −49 bps
    expect(at(2984.7)).toMatchObject({ status: 'out_of_band', withheld: true }); // −51 bps
    expect(at(2984.7).deviationBps).toBeCloseTo(-51, 6);
    expect(at(3023.7).status).toBe('in_band'); // +79 bps
    expect(at(3024.3).status).toBe('out_of_band'); // +81 bps
  });

  it('behavior: a curve off by ×10¹² or ÷10¹² (the decimals class of error) is out of band', () => {
    expect(nextBandState(undefined, input(3000e12), BAND).status).toBe('out_of_band');
    expect(nextBandState(undefined, input(3000e-12), BAND).status).toBe('out_of_band');
  });

  it('behavior: the mid is the tops averaged, or the one side there is; no level at all is no_curve', () => {
    expect(bookMid({ bids: [{ price: '99', amount: '1' }], asks: [{ price: '101', amount: '1' }] })).toBe(100);
    expect(bookMid({ bids: [], asks: [{ price: '101', amount: '1' }] })).toBe(101);
    expect(nextBandState(undefined, input(undefined), BAND)).toMatchObject({ status: 'no_curve', withheld: true });
  });

  it('behavior: a reference older than its limit is stale, at the limit it is not', () => {
    expect(nextBandState(undefined, input(3000, feed({ updatedAt: T - 120 })), BAND).status).toBe('in_band');
    expect(nextBandState(undefined, input(3000, feed({ updatedAt: T - 121 })), BAND)).toMatchObject({
      status: 'stale',
      ageSeconds: 121,
      withheld: true,
    });
  });

  it('error: a hostile feed is unreadable, never read on a guess: no answer, a price ≤ 0, updatedAt 0 or in the future, a round going back', () => {
    const previous = nextBandState(undefined, input(3000), BAND);
    const status = (f: FeedAnswer | null) => nextBandState(previous, input(3000, f, 101), BAND).status;
    expect(status(null)).toBe('unreadable');
    expect(status(feed({ answer: -3000_00000000n }))).toBe('unreadable');
    expect(status(feed({ answer: 0n }))).toBe('unreadable');
    expect(status(feed({ updatedAt: 0 }))).toBe('unreadable');
    expect(status(feed({ updatedAt: T + 1 }))).toBe('unreadable');
    expect(status(feed({ roundId: 9n }))).toBe('unreadable');
    expect(status(feed({ updatedAt: T - 11 }))).toBe('unreadable');
    // The same round again, or a later one, is fine.
    expect(status(feed())).toBe('in_band');
    expect(status(feed({ roundId: 11n, updatedAt: T }))).toBe('in_band');
  });

  it('behavior: an unreadable answer keeps the last round accepted as the floor', () => {
    const first = nextBandState(undefined, input(3000, feed({ roundId: 20n })), BAND);
    const garbled = nextBandState(first, input(3000, null, 101), BAND);
    expect(garbled.status).toBe('unreadable');
    expect(garbled.roundId).toBe('20');
    expect(nextBandState(garbled, input(3000, feed({ roundId: 19n }), 102), BAND).status).toBe('unreadable');
  });
});

describe('nextBandState: leaving and coming back (hysteresis)', () => {
  /** Runs `mids` block by block from 100 on; returns each block's state. */
  const run = (mids: number[], band = BAND): PairBandState[] => {
    const states: PairBandState[] = [];
    mids.forEach((mid, i) => states.push(nextBandState(states.at(-1), input(mid, feed(), 100 + i), band)));
    return states;
  };

  it('behavior: withheld in the block that shows the breach, served again after three blocks back in band', () => {
    const states = run([3000, 3000, 2900, 3000, 3000, 3000, 3000]);
    expect(states.map((s) => s.withheld)).toEqual([false, false, true, true, true, false, false]);
    expect(states.map((s) => s.since)).toEqual([100, 100, 102, 102, 102, 105, 105]);
    expect(states.map((s) => s.streak)).toEqual([0, 0, 0, 1, 2, 0, 0]);
  });

  it('behavior: a block out of band while recovering starts the count again', () => {
    const states = run([2900, 3000, 3000, 2900, 3000, 3000, 3000]);
    expect(states.map((s) => s.withheld)).toEqual([true, true, true, true, true, true, false]);
  });

  it("behavior: a withheld pair's Retry-After is the blocks left to recover times the block time", () => {
    const states = run([2900, 3000]);
    expect(states.map((s) => s.retryAfterSeconds)).toEqual([6, 4]);
  });

  it('behavior: in watch mode the standing is the same and reported, but the pair is never withheld', () => {
    const states = run([3000, 2900, 3000, 3000, 3000], { ...BAND, mode: 'watch' });
    expect(states.map((s) => s.served)).toEqual([true, false, false, false, true]);
    expect(states.map((s) => s.withheld)).toEqual([false, false, false, false, false]);
    expect(states[1]).toMatchObject({ status: 'out_of_band', mode: 'watch' });
  });
});

describe('blockBandRecord', () => {
  const token = (address: string, symbol: string) => ({ address, symbol, decimals: 18 });
  const tracked: TrackedPairs = {
    quote: token('0x' + '11'.repeat(20), 'USDC'),
    pairs: [
      {
        base: token('0x' + 'AA'.repeat(20), 'WETH'),
        ladder: { asks: [], bids: [] },
        reference: { feed: '0x' + '33'.repeat(20), band: BAND },
      },
      { base: token('0x' + 'bb'.repeat(20), 'WBTC'), ladder: { asks: [], bids: [] } },
    ],
  };
  const books = [
    { ...book(3000), baseToken: '', quoteToken: '' },
    { ...book(60000), baseToken: '', quoteToken: '' },
  ] as never;

  it('behavior: only the pairs with a reference, by lower-case base; the block time per block from the previous record', () => {
    const first = blockBandRecord(tracked, books, [feed(), undefined], undefined, { number: 100, timestamp: T })!;
    expect(Object.keys(first.pairs)).toEqual(['0x' + 'aa'.repeat(20)]);
    expect(first).toMatchObject({ block: 100, time: T });
    const out = blockBandRecord(tracked, [{ ...book(2900) }, books[1]] as never, [feed(), undefined], first, {
      number: 104,
      timestamp: T + 8,
    })!;
    expect(out.pairs['0x' + 'aa'.repeat(20)]).toMatchObject({ withheld: true, retryAfterSeconds: 6 });
  });

  it('behavior: a chain without any reference has no record', () => {
    const none: TrackedPairs = { ...tracked, pairs: [tracked.pairs[1]!] };
    expect(blockBandRecord(none, books, [undefined], undefined, { number: 1, timestamp: T })).toBeUndefined();
  });
});
