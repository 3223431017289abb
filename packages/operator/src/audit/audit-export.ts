/**
 * How `audit list` and `audit export` print records: one JSON object per line (the stored record
 * plus its stream id), CSV with the record's fields as columns, or a short human line.
 */
import { AUDIT_FIELDS } from '@pmm/core';
import type { AuditEntry } from '../audit-trail/audit-reader';
import { csvLine } from '../cli/csv';

export type AuditFormat = 'jsonl' | 'csv';

export const AUDIT_CSV_HEADER = csvLine(['id', ...AUDIT_FIELDS]);

export function auditJsonLine(entry: AuditEntry): string {
  return JSON.stringify({ id: entry.id, ...entry.record });
}

export function auditCsvLine(entry: AuditEntry): string {
  return csvLine([entry.id, ...AUDIT_FIELDS.map((f) => entry.record[f])]);
}

/** `2026-10-01T12:00:00.000Z  8453  acme  key pmm_…  user 0x…  WETH→USDC …` for a terminal. */
export function auditHumanLine(entry: AuditEntry): string {
  const r = entry.record;
  const amounts = r.amountIn === undefined ? '' : `  amountIn ${r.amountIn} minAmountOut ${r.minAmountOut ?? '0'}`;
  return (
    `${new Date(r.time).toISOString()}  chain ${r.chainId}  ${r.integratorId}  key ${r.keyId || '-'}  ` +
    `request ${r.requestId}  user ${r.userAddress}  ${r.tokenIn} → ${r.tokenOut}  fee ${r.fee}${amounts}  ` +
    `signature ${r.signature}`
  );
}
