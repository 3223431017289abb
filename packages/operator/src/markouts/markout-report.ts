/**
 * The markout report: each executed swap of the ledger with its markouts (markouts.ts), against
 * the maker's own mid and against the pair's reference, and aggregates per integrator, per pair
 * and per size bucket: count, notional, and for each horizon and each the mean and median markout with a 95 % confidence interval of the mean (normal
 * approximation, mean ± 1.96 × s/√n: with a handful of swaps the interval is wide, as it should
 * be; none with fewer than two), plus the executed-versus-quoted gap where swaps had a firm quote.
 * A zero-leg swap (no price: markouts.ts) shows {@link NO_MARKOUT_ZERO_LEG} in place of its
 * markouts, counts in no mean, and each aggregate says how many such swaps it holds.
 * Output is deterministic: the same ledger and history give the same bytes.
 */
import type { LedgerEntry, MidRecord } from '@pmm/core';
import { csvLine } from '../cli/csv';
import { textTable } from '../cli/text-table';
import {
  HORIZONS,
  NO_MARKOUT_ZERO_LEG,
  markoutPrice,
  quotedGapBps,
  swapMarkouts,
  type HorizonKey,
  type Markouts,
} from '../ledger/markouts';

export interface SwapMarkoutLine {
  chainId: number;
  txHash: string;
  callIndex: number;
  blockNumber: number;
  blockTime: string;
  integratorId: string;
  keyId: string;
  pair: string;
  side: LedgerEntry['side'];
  baseAmount: string;
  quoteAmount: string;
  executionPrice: string;
  /** Basis points by horizon; null until the horizon has passed; NO_MARKOUT_ZERO_LEG for a zero-leg swap. */
  markoutsBps: Markouts;
  /** Quote-token units by horizon. */
  markoutsQuote: Markouts;
  /** The same against the pair's reference at each horizon (null: none there, or not yet). */
  referenceMarkoutsBps: Markouts;
  referenceMarkoutsQuote: Markouts;
  /** Executed versus the firm quote, bps (null: no quote recorded). */
  quotedGapBps: number | null;
}

export interface MarkoutStats {
  count: number;
  mean: number;
  median: number;
  /** 95 % confidence interval of the mean; null with fewer than two swaps. */
  ci95: [number, number] | null;
}

export interface MarkoutAggregate {
  by: 'integrator' | 'pair' | 'size';
  key: string;
  count: number;
  /** Of `count`, the zero-leg swaps: no markout, in no mean. */
  zeroLeg: number;
  /** Sum of the swaps' quote amounts. */
  notional: number;
  /** Basis points by horizon; null when no swap has reached it. */
  markoutsBps: Record<HorizonKey, MarkoutStats | null>;
  /** The same against the reference: null when no swap has a reference markout at that horizon. */
  referenceMarkoutsBps: Record<HorizonKey, MarkoutStats | null>;
  quotedGapBps: MarkoutStats | null;
}

export interface MarkoutReport {
  period: { from: string; to: string };
  chains: number[];
  swaps: SwapMarkoutLine[];
  aggregates: MarkoutAggregate[];
}

/** Size buckets by notional in quote units (upper bounds exclusive). */
const SIZE_BUCKETS: readonly [number, string][] = [
  [1_000, '<1k'],
  [10_000, '1k-10k'],
  [100_000, '10k-100k'],
  [Infinity, '>=100k'],
];

export function sizeBucket(notional: number): string {
  return SIZE_BUCKETS.find(([upper]) => notional < upper)![1];
}

/** The statistics of the finite values among `all` (null when there is none). */
export function statsOf(all: readonly number[]): MarkoutStats | null {
  const values = all.filter((v) => Number.isFinite(v));
  const n = values.length;
  if (n === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const mean = values.reduce((a, b) => a + b, 0) / n;
  const median = n % 2 ? sorted[(n - 1) / 2]! : (sorted[n / 2 - 1]! + sorted[n / 2]!) / 2;
  if (n < 2) return { count: n, mean, median, ci95: null };
  const sd = Math.sqrt(values.reduce((a, v) => a + (v - mean) ** 2, 0) / (n - 1));
  const half = (1.96 * sd) / Math.sqrt(n);
  return { count: n, mean, median, ci95: [mean - half, mean + half] };
}

export interface MarkoutInput {
  fromSeconds: number;
  toSeconds: number;
  chains: number[];
  /** The ledger's swaps of the period (all chains). */
  entries: readonly LedgerEntry[];
  /** Each chain's mid history around them, sorted by block. */
  history(chainId: number): readonly MidRecord[];
}

/** A markout as a list of the numbers it holds: none for null or the marker. */
const numberOr = (v: Markouts[HorizonKey]): number[] => (typeof v === 'number' ? [v] : []);

export function buildMarkoutReport(input: MarkoutInput): MarkoutReport {
  const ordered = [...input.entries].sort(
    (a, b) =>
      a.chainId - b.chainId ||
      a.blockNumber - b.blockNumber ||
      a.txHash.localeCompare(b.txHash) ||
      a.callIndex - b.callIndex,
  );
  const swaps = ordered.map((e): SwapMarkoutLine => {
    const m = swapMarkouts(e, input.history(e.chainId));
    const r = swapMarkouts(e, input.history(e.chainId), 'reference');
    return {
      chainId: e.chainId,
      txHash: e.txHash,
      callIndex: e.callIndex,
      blockNumber: e.blockNumber,
      blockTime: new Date(e.blockTime * 1000).toISOString(),
      integratorId: e.integratorId,
      keyId: e.keyId,
      pair: e.pair,
      side: e.side,
      baseAmount: e.baseAmount,
      quoteAmount: e.quoteAmount,
      executionPrice: e.executionPrice,
      markoutsBps: m.bps,
      markoutsQuote: m.quote,
      referenceMarkoutsBps: r.bps,
      referenceMarkoutsQuote: r.quote,
      quotedGapBps: quotedGapBps(e),
    };
  });
  const aggregates: MarkoutAggregate[] = [];
  const keyOf = {
    integrator: (s: SwapMarkoutLine) => s.integratorId || '(unattributed)',
    pair: (s: SwapMarkoutLine) => `${s.chainId}:${s.pair}`,
    size: (s: SwapMarkoutLine) => sizeBucket(Number(s.quoteAmount)),
  };
  for (const by of ['integrator', 'pair', 'size'] as const) {
    const groups = new Map<string, SwapMarkoutLine[]>();
    for (const s of swaps) groups.set(keyOf[by](s), [...(groups.get(keyOf[by](s)) ?? []), s]);
    for (const key of [...groups.keys()].sort()) {
      const group = groups.get(key)!;
      const stats = (of: (s: SwapMarkoutLine) => Markouts) => {
        const byHorizon = {} as Record<HorizonKey, MarkoutStats | null>;
        for (const h of HORIZONS) byHorizon[h.key] = statsOf(group.flatMap((s) => numberOr(of(s)[h.key])));
        return byHorizon;
      };
      aggregates.push({
        by,
        key,
        count: group.length,
        zeroLeg: group.filter((s) => markoutPrice(s) === undefined).length,
        notional: group.reduce((t, s) => t + Number(s.quoteAmount), 0),
        markoutsBps: stats((s) => s.markoutsBps),
        referenceMarkoutsBps: stats((s) => s.referenceMarkoutsBps),
        quotedGapBps: statsOf(group.flatMap((s) => (s.quotedGapBps === null ? [] : [s.quotedGapBps]))),
      });
    }
  }
  return {
    period: {
      from: new Date(input.fromSeconds * 1000).toISOString(),
      to: new Date(input.toSeconds * 1000).toISOString(),
    },
    chains: input.chains,
    swaps,
    aggregates,
  };
}

export function markoutJson(report: MarkoutReport): string {
  return `${JSON.stringify(report, null, 2)}\n`;
}

const fixed = (v: number | null | undefined, digits = 2) => (v === null || v === undefined ? '' : v.toFixed(digits));
/**
 * A number for csvLine (a negative number passes as it is; only text is guarded against formulas);
 * the marker of a zero-leg swap as it is; empty for null.
 */
const rounded = (v: Markouts[HorizonKey], digits: number) =>
  v === null ? undefined : typeof v === 'string' ? v : Number(v.toFixed(digits));

/** One line per swap, a column per horizon (bps, then quote units), against the mid then the reference. */
export function markoutCsv(report: MarkoutReport): string {
  const head = [
    'chainId',
    'blockNumber',
    'blockTime',
    'txHash',
    'callIndex',
    'integratorId',
    'pair',
    'side',
    'baseAmount',
    'quoteAmount',
    'executionPrice',
    ...HORIZONS.map((h) => `markout_${h.key}_bps`),
    ...HORIZONS.map((h) => `markout_${h.key}_quote`),
    ...HORIZONS.map((h) => `ref_markout_${h.key}_bps`),
    ...HORIZONS.map((h) => `ref_markout_${h.key}_quote`),
    'quotedGapBps',
  ];
  const rows = report.swaps.map((s) =>
    csvLine([
      String(s.chainId),
      String(s.blockNumber),
      s.blockTime,
      s.txHash,
      String(s.callIndex),
      s.integratorId,
      s.pair,
      s.side,
      s.baseAmount,
      s.quoteAmount,
      s.executionPrice,
      ...HORIZONS.map((h) => rounded(s.markoutsBps[h.key], 4)),
      ...HORIZONS.map((h) => rounded(s.markoutsQuote[h.key], 6)),
      ...HORIZONS.map((h) => rounded(s.referenceMarkoutsBps[h.key], 4)),
      ...HORIZONS.map((h) => rounded(s.referenceMarkoutsQuote[h.key], 6)),
      rounded(s.quotedGapBps, 4),
    ]),
  );
  return [csvLine(head), ...rows].join('\n') + '\n';
}

/**
 * The aggregates as an aligned text table: mean [95 % interval] bps per horizon against the mid,
 * then against the reference (`ref`), and how many of the swaps had a zero leg (in no mean).
 */
export function markoutTable(report: MarkoutReport): string {
  const head = [
    'by',
    'key',
    'swaps',
    'notional',
    ...HORIZONS.map((h) => `${h.key} bps`),
    ...HORIZONS.map((h) => `${h.key} ref bps`),
    'vs quote bps',
    NO_MARKOUT_ZERO_LEG,
  ];
  const cell = (s: MarkoutStats | null) =>
    s === null
      ? '-'
      : `${fixed(s.mean)} (med ${fixed(s.median)}${s.ci95 ? `, ${fixed(s.ci95[0])}..${fixed(s.ci95[1])}` : ''})`;
  const rows = report.aggregates.map((a) => [
    a.by,
    a.key,
    String(a.count),
    fixed(a.notional),
    ...HORIZONS.map((h) => cell(a.markoutsBps[h.key])),
    ...HORIZONS.map((h) => cell(a.referenceMarkoutsBps[h.key])),
    cell(a.quotedGapBps),
    String(a.zeroLeg),
  ]);
  return (
    [
      `markouts ${report.period.from} .. ${report.period.to}, chains ${report.chains.join(', ')}: ${report.swaps.length} swaps`,
      ...textTable(head, rows),
    ].join('\n') + '\n'
  );
}
