/**
 * Markouts and their aggregates (pure): the maker's sign, the horizon's book (the last block at
 * or before the target, null before the history reaches it), statistics with their interval; a
 * swap with a zero leg has none, says so in `markouts`' JSON, CSV and table, and counts in no mean.
 * Beside each markout, the same against the pair's reference at the horizon: a frozen curve marks
 * its losses at zero against its own mid, not against the reference.
 */
import type { LedgerEntry, MidRecord } from '@pmm/core';
import {
  HORIZONS,
  NO_MARKOUT_ZERO_LEG,
  buildMarkoutReport,
  markoutBps,
  markoutCsv,
  markoutPrice,
  markoutQuote,
  markoutTable,
  recordAt,
  runMarkoutsCommand,
  statsOf,
  swapMarkouts,
  type MarkoutReport,
} from '../src';

const BASE = '0x' + 'aa'.repeat(20);
const entry = (over: Partial<LedgerEntry> = {}): LedgerEntry => ({
  chainId: 8453,
  blockNumber: 100,
  blockHash: '0x' + '11'.repeat(32),
  blockTime: 1_000,
  txHash: '0x' + '22'.repeat(32),
  callIndex: 0,
  via: 'direct',
  integratorId: 'acme',
  keyId: 'k',
  requestId: 'r',
  base: BASE,
  quote: '0x' + 'bb'.repeat(20),
  pair: 'WETH/USDC',
  side: 'ask',
  baseAmount: '2',
  quoteAmount: '6000',
  executionPrice: '3000',
  amountOut: '2000000000000000000',
  ...over,
});
const mid = (block: number, time: number, bid: string, ask: string): MidRecord => ({
  block,
  time,
  hash: '0x',
  pairs: { [BASE]: { bid, ask } },
});

describe('markouts', () => {
  it("behavior: from the maker's side: a rise after the maker sold is a loss, after it bought a gain", () => {
    expect(markoutBps(entry({ side: 'ask' }), 3030)).toBeCloseTo(-100, 9);
    expect(markoutBps(entry({ side: 'bid' }), 3030)).toBeCloseTo(100, 9);
  });

  it('behavior: a horizon reads the last book at or before it, and is null until the history reaches it', () => {
    const history = [mid(100, 1_000, '2999', '3001'), mid(101, 1_002, '3029', '3031'), mid(103, 1_013, '3059', '3061')];
    expect(recordAt(history, { block: 102 })?.block).toBe(101);
    expect(recordAt(history, { time: 1_012 })?.block).toBe(101);
    expect(recordAt(history, { block: 104 })).toBeUndefined();
    const m = swapMarkouts(entry(), history);
    expect(m.bps['1b']).toBeCloseTo(-100, 9);
    expect(m.quote['1b']).toBeCloseTo(-60, 9); // −(3030 − 3000) × 2
    expect(m.bps['12s']).toBeCloseTo(-100, 9);
    expect(m.bps['5b']).toBeNull();
    expect(m.bps['300s']).toBeNull();
  });

  it('behavior: an empty side leaves no mid (null), never a price of zero', () => {
    expect(swapMarkouts(entry(), [mid(101, 1_002, '', '3001')]).bps['1b']).toBeNull();
  });

  it('behavior: mean, median and a 95 % interval; none with one value', () => {
    expect(statsOf([])).toBeNull();
    expect(statsOf([5])).toEqual({ count: 1, mean: 5, median: 5, ci95: null });
    const s = statsOf([1, 2, 3, 10])!;
    expect(s.mean).toBe(4);
    expect(s.median).toBe(2.5);
    const half = (1.96 * Math.sqrt(((1 - 4) ** 2 + (2 - 4) ** 2 + (3 - 4) ** 2 + (10 - 4) ** 2) / 3)) / 2;
    expect(s.ci95![0]).toBeCloseTo(4 - half, 9);
    expect(s.ci95![1]).toBeCloseTo(4 + half, 9);
  });

  it('behavior: aggregates per integrator, pair and size bucket, with the gap to the firm quote', () => {
    const history = [mid(100, 1_000, '2999', '3001'), mid(101, 1_001, '2969', '2971'), mid(200, 2_000, '2969', '2971')];
    const report = buildMarkoutReport({
      fromSeconds: 0,
      toSeconds: 10_000,
      chains: [8453],
      entries: [
        entry({ integratorId: 'a', quotedAmountOut: '2000000000000000000', amountOut: '1990000000000000000' }),
        entry({ integratorId: 'b', txHash: '0x' + '33'.repeat(32), quoteAmount: '600', baseAmount: '0.2' }),
      ],
      history: () => history,
    });
    expect(report.swaps.map((s) => s.quotedGapBps)).toEqual([-50, null]);
    expect(report.aggregates.map((a) => [a.by, a.key, a.count, a.notional])).toEqual([
      ['integrator', 'a', 1, 6000],
      ['integrator', 'b', 1, 600],
      ['pair', '8453:WETH/USDC', 2, 6600],
      ['size', '1k-10k', 1, 6000],
      ['size', '<1k', 1, 600],
    ]);
    // The mid fell 1 % after the maker sold: +100 bps for the maker.
    expect(report.aggregates[2]!.markoutsBps['1b']!.mean).toBeCloseTo(100, 9);
  });
});

describe('markouts against the reference', () => {
  /** A frozen curve (its mid stays at 3000) while the market, and its reference, rise 1 %. */
  const frozen = (block: number, time: number, ref?: string): MidRecord => ({
    block,
    time,
    hash: '0x',
    pairs: { [BASE]: { bid: '2999', ask: '3001', ...(ref ? { ref } : {}) } },
  });
  const history = [
    frozen(100, 1_000, '3000'),
    frozen(101, 1_002, '3030'),
    frozen(105, 1_012, '3030'),
    frozen(130, 1_300),
    frozen(140, 1_400),
  ];

  it('behavior: the maker sold at its frozen mid while the reference rose: 0 against its own mid, −100 bps against the reference; null where the record has no reference', () => {
    const own = swapMarkouts(entry(), history);
    const ref = swapMarkouts(entry(), history, 'reference');
    // The maker sold at its own mid, which never moved: 0 (a sign on zero is still zero).
    for (const h of ['1b', '5b', '12s'] as const) expect(Math.abs(own.bps[h] as number)).toBe(0);
    expect(ref.bps['1b']).toBeCloseTo(-100, 9);
    expect(ref.quote['1b']).toBeCloseTo(-60, 9); // −(3030 − 3000) × 2
    expect(ref.bps['5b']).toBeCloseTo(-100, 9);
    expect(ref.bps['12s']).toBeCloseTo(-100, 9);
    // Block 125 is read from block 105 (the last at or before it); 300 s from block 130, which has no reference.
    expect(ref.bps['25b']).toBeCloseTo(-100, 9);
    expect(Math.abs(own.bps['300s'] as number)).toBe(0);
    expect(ref.bps['300s']).toBeNull();
  });

  it('behavior: the report carries both, per swap and per aggregate, in JSON, CSV and the table', () => {
    const report = buildMarkoutReport({
      fromSeconds: 0,
      toSeconds: 10_000,
      chains: [8453],
      entries: [entry(), entry({ txHash: '0x' + '33'.repeat(32) })],
      history: () => history,
    });
    expect(report.swaps[0]!.referenceMarkoutsBps['1b']).toBeCloseTo(-100, 9);
    expect(report.swaps[0]!.referenceMarkoutsQuote['1b']).toBeCloseTo(-60, 9);
    const pair = report.aggregates.find((a) => a.by === 'pair')!;
    expect(Math.abs(pair.markoutsBps['1b']!.mean)).toBe(0);
    expect(pair.referenceMarkoutsBps['1b']!.mean).toBeCloseTo(-100, 9);
    expect(pair.referenceMarkoutsBps['300s']).toBeNull();
    const [head, row] = markoutCsv(report)
      .trim()
      .split('\n')
      .map((l) => l.split(','));
    expect(Math.abs(Number(row![head!.indexOf('markout_1b_bps')]))).toBe(0);
    expect(Number(row![head!.indexOf('ref_markout_1b_bps')])).toBeCloseTo(-100, 4);
    expect(Number(row![head!.indexOf('ref_markout_1b_quote')])).toBeCloseTo(-60, 6);
    expect(row![head!.indexOf('ref_markout_300s_bps')]).toBe('');
    const table = markoutTable(report);
    expect(table).toContain('1b ref bps');
    expect(table).toContain('-100.00 (med -100.00');
  });
});

describe('a swap with a zero leg (a dust amount in, nothing paid out)', () => {
  // 1 wei of the base token in, 0 of the quote token out: the ledger's execution price is 0.
  const dust = entry({
    side: 'bid',
    txHash: '0x' + '44'.repeat(32),
    baseAmount: '0.000000000000000001',
    quoteAmount: '0',
    executionPrice: '0',
    amountOut: '0',
  });
  const real = [1, 2, 3].map((i) => entry({ txHash: '0x' + `5${i}`.repeat(32), callIndex: 0 }));
  // After block 100 the mid falls 1 % and stays: every horizon reached, +100 bps for the maker that sold.
  const history = [mid(100, 1_000, '2999', '3001'), mid(101, 1_002, '2969', '2971'), mid(130, 1_400, '2969', '2971')];

  it('behavior: has no price, so no markout at any horizon (the marker), never ±Infinity or NaN', () => {
    expect(markoutPrice(dust)).toBeUndefined();
    expect(markoutBps(dust, 2970)).toBeUndefined();
    expect(markoutQuote(dust, 2970)).toBeUndefined();
    // The other way round: a dust amount of the quote token in, no base token out.
    const other = entry({ side: 'ask', baseAmount: '0', quoteAmount: '0.000001', executionPrice: '0' });
    expect(markoutBps(other, 2970)).toBeUndefined();
    // A mid that is not a number gives no markout either.
    expect(markoutBps(real[0]!, NaN)).toBeUndefined();
    const m = swapMarkouts(dust, history);
    for (const h of HORIZONS)
      expect([m.bps[h.key], m.quote[h.key]]).toEqual([NO_MARKOUT_ZERO_LEG, NO_MARKOUT_ZERO_LEG]);
  });

  it('behavior: `markouts` as JSON, CSV and table: the marker for it, no Infinity, NaN or null in its markouts, and the means are those of the real swaps', async () => {
    const run = async (format: string) => {
      let out = '';
      const code = await runMarkoutsCommand(
        ['--from', '1970-01-01', '--to', '1970-01-02', '--chain', '8453', '--format', format],
        {
          ledger: { entries: async () => [dust, ...real], mids: async () => history },
          out: (t) => (out += t),
          err: (l) => (out += l),
        },
      );
      expect(code).toBe(0);
      expect(out).not.toMatch(/Infinity|NaN/);
      return out;
    };

    const report = JSON.parse(await run('json')) as MarkoutReport;
    const line = report.swaps.find((s) => s.txHash === dust.txHash)!;
    for (const h of HORIZONS) {
      expect([line.markoutsBps[h.key], line.markoutsQuote[h.key]]).toEqual([NO_MARKOUT_ZERO_LEG, NO_MARKOUT_ZERO_LEG]);
      // Every real swap has its markout at every horizon: +100 bps.
      for (const s of report.swaps.filter((x) => x !== line)) expect(s.markoutsBps[h.key]).toBeCloseTo(100, 6);
    }
    const acme = report.aggregates.find((a) => a.by === 'integrator' && a.key === 'acme')!;
    expect([acme.count, acme.zeroLeg]).toEqual([4, 1]);
    for (const h of HORIZONS)
      expect([acme.markoutsBps[h.key]!.count, acme.markoutsBps[h.key]!.mean]).toEqual([3, expect.closeTo(100, 6)]);

    const csv = (await run('csv')).trim().split('\n');
    const head = csv[0]!.split(',');
    const row = csv.find((l) => l.includes(dust.txHash))!.split(',');
    for (const h of HORIZONS) {
      expect(row[head.indexOf(`markout_${h.key}_bps`)]).toBe(NO_MARKOUT_ZERO_LEG);
      expect(row[head.indexOf(`markout_${h.key}_quote`)]).toBe(NO_MARKOUT_ZERO_LEG);
    }

    const table = (await run('table')).split('\n');
    expect(table[1]).toMatch(new RegExp(`vs quote bps\\s+${NO_MARKOUT_ZERO_LEG}$`));
    // acme: 4 swaps, 1 of them without a markout; its means over the other 3.
    expect(table.find((l) => l.startsWith('integrator  acme'))).toMatch(/^integrator\s+acme\s+4\s.*\b100\.00 .*\s1$/);
  });
});
