/**
 * A pair's transitions in and out of its band (band-transition.ts): found between the standing
 * written with the last book and the next, each with the block and the values that decided, and
 * read back strictly (a reader never throws on an entry that is not one).
 */
import {
  bandTransitions,
  decodeBandTransition,
  encodeBandTransition,
  type BandRecord,
  type PairBandState,
} from '../../src';

const WETH = `0x${'aa'.repeat(20)}`;
const WBTC = `0x${'bb'.repeat(20)}`;
const symbol = (base: string) => (base === WETH ? 'WETH' : 'WBTC');

const state = (over: Partial<PairBandState>): PairBandState => ({
  status: 'in_band',
  mode: 'enforce',
  withheld: false,
  served: true,
  streak: 0,
  since: 1,
  maxDeviationBelowBps: 50,
  maxDeviationAboveBps: 50,
  ...over,
});
const record = (block: number, pairs: Record<string, PairBandState>): BandRecord => ({
  block,
  time: 1_000 + block,
  pairs,
});
const out = state({ status: 'out_of_band', withheld: true, served: false, deviationBps: -80, ageSeconds: 2 });

describe('band transitions', () => {
  it('behavior: a pair whose served flips is a transition out or in, with its values; one that stays is none', () => {
    const before = record(9, { [WETH]: state({}), [WBTC]: state({}) });
    const after = record(10, { [WETH]: out, [WBTC]: state({ deviationBps: 3 }) });
    expect(bandTransitions(before, after, symbol)).toEqual([
      {
        block: 10,
        time: 1_010,
        base: WETH,
        symbol: 'WETH',
        to: 'out',
        status: 'out_of_band',
        mode: 'enforce',
        withheld: true,
        deviationBps: -80,
        ageSeconds: 2,
      },
    ]);
    const back = record(13, { [WETH]: state({ deviationBps: 4, referencePrice: 3000, curvePrice: 3001.2 }) });
    expect(bandTransitions(after, back, symbol)).toMatchObject([
      { block: 13, to: 'in', status: 'in_band', withheld: false, referencePrice: 3000, curvePrice: 3001.2 },
    ]);
  });

  it('behavior: a pair seen for the first time is a transition only when out of band; watch mode reports without withholding', () => {
    const first = record(5, { [WETH]: state({}), [WBTC]: state({ ...out, mode: 'watch', withheld: false }) });
    expect(bandTransitions(undefined, first, symbol)).toMatchObject([
      { base: WBTC, symbol: 'WBTC', to: 'out', mode: 'watch', withheld: false },
    ]);
  });

  it('security: an entry that is not a transition reads as none, never throws', () => {
    const t = bandTransitions(undefined, record(2, { [WETH]: out }), symbol)[0]!;
    expect(decodeBandTransition(encodeBandTransition(t))).toEqual(t);
    for (const bad of [null, '', 'nope', '[]', '{"block":1}', encodeBandTransition({ ...t, to: 'sideways' as 'in' })])
      expect(decodeBandTransition(bad)).toBeUndefined();
    expect(decodeBandTransition(JSON.stringify({ ...t, deviationBps: 'x' }))).toBeUndefined();
  });
});
