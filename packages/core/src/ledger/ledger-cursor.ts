/**
 * The ledger's cursor: the last block it holds (it resumes after it). Written by the ledger with
 * each committed block, read by the operator console to show how far the ledger is; this file is
 * the one place that maps it to its stored JSON and back.
 */
export interface LedgerCursor {
  number: number;
  hash: string;
  /**
   * Unix seconds of that block: how far in chain time the ledger has read (a signature whose
   * window ends before it has its final fate, signature-fates.ts). Absent from cursors written
   * before it existed.
   */
  time?: number;
}

export function ledgerCursorJson(c: LedgerCursor): string {
  return JSON.stringify({ number: c.number, hash: c.hash, ...(c.time !== undefined ? { time: c.time } : {}) });
}

/** Reads a stored cursor back; throws naming what is wrong. */
export function parseLedgerCursor(json: string): LedgerCursor {
  const v = JSON.parse(json) as Partial<LedgerCursor>;
  if (typeof v !== 'object' || v === null || !Number.isSafeInteger(v.number) || typeof v.hash !== 'string')
    throw new Error('ledger cursor: number or hash');
  if (v.time !== undefined && !Number.isSafeInteger(v.time)) throw new Error('ledger cursor: time');
  return v as LedgerCursor;
}
