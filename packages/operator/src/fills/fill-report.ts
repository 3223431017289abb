/**
 * `fills`' report: each signature's fate and the figures per integrator, chain and pair (core's
 * signature-fates.ts and fill-figures.ts), written as a table (the figures), JSON (both) or CSV
 * (one line per signature). Pure.
 */
import type { FillFigures, SignatureFate, Spread } from '@pmm/core';
import { csvLine } from '../cli/csv';
import { textTable } from '../cli/text-table';

export interface FillReport {
  period: { from: string; to: string };
  chains: number[];
  fates: SignatureFate[];
  figures: FillFigures[];
}

const percent = (r: number | null) => (r === null ? '-' : `${(r * 100).toFixed(1)} %`);
const spread = (s: Spread | null, digits: number) =>
  s === null ? '-' : `${s.median.toFixed(digits)} / ${s.p95.toFixed(digits)}`;

export function fillJson(report: FillReport): string {
  return `${JSON.stringify(report, null, 2)}\n`;
}

/** The figures: one line per integrator, chain and pair. */
export function fillTable(report: FillReport): string {
  const head = [
    'integrator',
    'chain',
    'pair',
    'signatures',
    'executed',
    'reverted',
    'unused',
    'pending',
    'fill rate (firm)',
    'revert rate',
    'reverts by reason',
    'unused share',
    'delay s med / p95',
    'delay blocks med / p95',
  ];
  const rows = report.figures.map((f) => [
    f.integratorId || '(unattributed)',
    String(f.chainId),
    f.pair,
    String(f.signatures),
    String(f.executed),
    String(f.reverted),
    String(f.unused),
    String(f.pending),
    `${percent(f.fillRate)} (${f.firmExecuted}/${f.firm})`,
    percent(f.revertRate),
    Object.entries(f.revertsByReason)
      .map(([reason, n]) => `${reason} ${n}`)
      .join(', ') || '-',
    percent(f.unusedShare),
    spread(f.delaySeconds, 1),
    spread(f.delayBlocks, 0),
  ]);
  return (
    [
      `fills ${report.period.from} .. ${report.period.to}, chains ${report.chains.join(', ')}: ${report.fates.length} signatures`,
      ...textTable(head, rows),
    ].join('\n') + '\n'
  );
}

const CSV_FIELDS = [
  'chainId',
  'integratorId',
  'keyId',
  'requestId',
  'clientRequestId',
  'signature',
  'signedAt',
  'quoteTimestamp',
  'deadline',
  'firm',
  'pair',
  'fate',
  'reason',
  'executions',
  'reverts',
  'txHash',
  'blockNumber',
  'blockTime',
  'delaySeconds',
  'delayBlocks',
  'amountOut',
  'quotedAmountOut',
  'executedVsQuotedBps',
] as const;

/** One line per signature. */
export function fillCsv(report: FillReport): string {
  const lines = report.fates.map((f) =>
    csvLine(
      CSV_FIELDS.map((k) => {
        const v = f[k];
        return k === 'signedAt' ? new Date(f.signedAt).toISOString() : v === undefined ? undefined : String(v);
      }),
    ),
  );
  return [CSV_FIELDS.join(','), ...lines].join('\n') + '\n';
}
