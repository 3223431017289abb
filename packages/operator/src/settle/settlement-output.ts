/**
 * How `settle` writes a settlement report (settlement-report.ts computes it): `--format json`, the
 * report as it is; `--format csv`, one row per integrator, chain and pair; with `--detail`, one row
 * per swap. The same report gives the same bytes.
 */
import { csvLine } from '../cli/csv';
import type { SettlementReport, SwapLine, UnexaminedLine } from './settlement-report';

export function settlementJson(report: SettlementReport): string {
  return `${JSON.stringify(report, null, 2)}\n`;
}

const SUMMARY_COLUMNS = ['integratorId', 'chainId', 'pair', 'quoteToken', 'swaps', 'volume', 'fees', 'transactions'];

/** What the summary's integratorId column says for transactions that could not be examined. */
export const NOT_EXAMINED_ROW = '(not examined)';
/** What the summary's integratorId column says for a chain whose node had no block past the period. */
export const NOT_ENDED_ROW = '(period not ended)';

/**
 * One row per integrator, chain and pair; the transaction hashes space-separated in the last
 * column. An incomplete report ends with a row per chain that is why (integratorId
 * NOT_EXAMINED_ROW with the transactions' hashes, or NOT_ENDED_ROW; no figures), so that the
 * file itself shows it is incomplete.
 */
export function settlementCsv(report: SettlementReport): string {
  const rows = report.summary.map((s) =>
    csvLine([s.integratorId, s.chainId, s.pair, s.quoteToken, s.swaps, s.volume, s.fees, s.transactions.join(' ')]),
  );
  for (const chainId of new Set(report.unexamined.map((u) => u.chainId))) {
    const hashes = report.unexamined.filter((u) => u.chainId === chainId).map((u) => u.txHash);
    rows.push(csvLine([NOT_EXAMINED_ROW, chainId, '', '', '', '', '', hashes.join(' ')]));
  }
  for (const c of report.chains)
    if (!c.periodEnded) rows.push(csvLine([NOT_ENDED_ROW, c.chainId, '', '', '', '', '', '']));
  return [csvLine(SUMMARY_COLUMNS), ...rows].join('\n') + '\n';
}

const SWAP_COLUMNS: (keyof SwapLine)[] = [
  'integratorId',
  'chainId',
  'blockNumber',
  'blockTime',
  'txHash',
  'callIndex',
  'via',
  'pair',
  'side',
  'user',
  'txFrom',
  'tokenIn',
  'tokenOut',
  'amountIn',
  'amountOut',
  'fee',
  'volume',
  'fees',
  'keyId',
  'requestId',
  'signedAt',
  'delaySeconds',
  'reason',
];

/**
 * One row per swap, attributed first, then those listed apart (empty integratorId, with a reason),
 * then the transactions that could not be examined (no swap figures, with the reason).
 */
export function settlementSwapsCsv(report: SettlementReport): string {
  const rows = [...report.swaps, ...report.unattributed].map((l) => csvLine(SWAP_COLUMNS.map((c) => l[c])));
  const unexamined = report.unexamined.map((u) =>
    csvLine(SWAP_COLUMNS.map((c) => (c in u ? u[c as keyof UnexaminedLine] : ''))),
  );
  return [csvLine(SWAP_COLUMNS), ...rows, ...unexamined].join('\n') + '\n';
}
