/**
 * The ledger's totals of one UTC day per integrator: executed swaps and their notional (quote
 * token units), the router calls that reverted, and the firm signatures judged that day (at the
 * first block past their deadline, services/indexer/src/ledger/deadline-fates.ts) with those of
 * them executed and unused, kept beside the ledger's swaps so that a live view (the operator console) reads
 * one small hash instead of a day of swaps (up to two million of them at 50 swaps a block on a
 * 2 s chain). The ledger writes them in the transaction that commits the block whose swaps they
 * count, and takes them back in the one that removes a reorg's orphans, so they always add up to
 * what the ledger holds. This file is the one place that maps them to the hash's fields and back.
 */
import type { LedgerEntry } from './ledger-entry';
import type { LedgerRevert } from './ledger-revert';

/** A day's totals are kept this long after they were last written: a week back, for a look with redis-cli. */
export const LEDGER_DAY_TTL_SECONDS = 8 * 86_400;

/** The UTC day of a block time (Unix seconds), as a Unix day number (the hash's key). */
export function ledgerDay(blockTimeSeconds: number): number {
  return Math.floor(blockTimeSeconds / 86_400);
}

/** The day as operators read it: `2026-11-05`. */
export function ledgerDayName(day: number): string {
  return new Date(day * 86_400_000).toISOString().slice(0, 10);
}

/** One integrator's totals of the day ('' for the swaps nobody's signature explains). */
export interface LedgerDayTotal {
  integratorId: string;
  swaps: number;
  /** Sum of the swaps' quoteAmount, quote token units (a float: for display, not for settlement). */
  notional: number;
  /** Router calls that reverted (ledger-revert.ts), attributed to it ('' when no record matched). */
  reverts: number;
  /** Firm signatures judged that day (their window passed in the ledger's time), and those executed and unused. */
  firm: number;
  firmExecuted: number;
  firmUnused: number;
}

/** A signature judged at its deadline, as the day totals count it (the ledger's DeadlineFate). */
export interface LedgerDayFate {
  integratorId: string;
  firm: boolean;
  fate: 'executed' | 'reverted' | 'unused';
  /** The time of the block it was judged at (Unix s): its day. */
  blockTime: number;
}

/** The change a set of entries makes to the days they fall on: HINCRBY on `swaps`, HINCRBYFLOAT on `notional`. */
export interface LedgerDayIncrement {
  day: number;
  field: string;
  /** `count`: an integer (HINCRBY); `amount`: a float (HINCRBYFLOAT). */
  kind: 'count' | 'amount';
  by: number;
}

const SWAPS = 'swaps:';
const NOTIONAL = 'notional:';
const REVERTS = 'reverts:';
const FIRM = 'firm:';
const FIRM_EXECUTED = 'firmExecuted:';
const FIRM_UNUSED = 'firmUnused:';

/**
 * The increments of committing `entries`, `reverts` and the signatures judged (`sign` 1), or of
 * removing them (−1), one per day, integrator and field. Only firm signatures count in the day.
 */
export function ledgerDayIncrements(
  entries: readonly LedgerEntry[],
  sign: 1 | -1,
  reverts: readonly LedgerRevert[] = [],
  fates: readonly LedgerDayFate[] = [],
): LedgerDayIncrement[] {
  const sums = new Map<string, LedgerDayIncrement>();
  const add = (day: number, field: string, kind: LedgerDayIncrement['kind'], by: number) => {
    const key = `${day}\u0000${field}`;
    const inc = sums.get(key) ?? { day, field, kind, by: 0 };
    inc.by += by;
    sums.set(key, inc);
  };
  for (const e of entries) {
    const day = ledgerDay(e.blockTime);
    add(day, SWAPS + e.integratorId, 'count', sign);
    add(day, NOTIONAL + e.integratorId, 'amount', sign * Number(e.quoteAmount));
  }
  for (const r of reverts) add(ledgerDay(r.blockTime), REVERTS + r.integratorId, 'count', sign);
  for (const f of fates) {
    if (!f.firm) continue;
    const day = ledgerDay(f.blockTime);
    add(day, FIRM + f.integratorId, 'count', sign);
    if (f.fate === 'executed') add(day, FIRM_EXECUTED + f.integratorId, 'count', sign);
    if (f.fate === 'unused') add(day, FIRM_UNUSED + f.integratorId, 'count', sign);
  }
  return [...sums.values()];
}

/**
 * The totals in a day's hash (HGETALL), by integrator: those with swaps, reverted calls or firm
 * signatures judged left (a
 * reorg can take an integrator's back to 0; its notional then holds only the float's residue).
 */
export function parseLedgerDay(hash: Readonly<Record<string, string>>): LedgerDayTotal[] {
  const totals = new Map<string, LedgerDayTotal>();
  const of = (integratorId: string) => {
    const t = totals.get(integratorId) ?? {
      integratorId,
      swaps: 0,
      notional: 0,
      reverts: 0,
      firm: 0,
      firmExecuted: 0,
      firmUnused: 0,
    };
    totals.set(integratorId, t);
    return t;
  };
  for (const [field, value] of Object.entries(hash)) {
    const n = Number(value);
    if (!Number.isFinite(n)) continue;
    if (field.startsWith(SWAPS)) of(field.slice(SWAPS.length)).swaps = n;
    else if (field.startsWith(NOTIONAL)) of(field.slice(NOTIONAL.length)).notional = n;
    else if (field.startsWith(REVERTS)) of(field.slice(REVERTS.length)).reverts = n;
    else if (field.startsWith(FIRM)) of(field.slice(FIRM.length)).firm = n;
    else if (field.startsWith(FIRM_EXECUTED)) of(field.slice(FIRM_EXECUTED.length)).firmExecuted = n;
    else if (field.startsWith(FIRM_UNUSED)) of(field.slice(FIRM_UNUSED.length)).firmUnused = n;
  }
  return [...totals.values()].filter((t) => t.swaps > 0 || t.reverts > 0 || t.firm > 0);
}
