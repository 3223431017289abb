/**
 * The ledger's totals of one UTC day per integrator: executed swaps and their notional (quote
 * token units), and the router calls that reverted, kept beside the ledger's swaps so that a live view (the operator console) reads
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

/**
 * The increments of committing `entries` and `reverts` (`sign` 1), or of removing them (−1), one
 * per day, integrator and field.
 */
export function ledgerDayIncrements(
  entries: readonly LedgerEntry[],
  sign: 1 | -1,
  reverts: readonly LedgerRevert[] = [],
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
  return [...sums.values()];
}

/**
 * The totals in a day's hash (HGETALL), by integrator: those with swaps or reverted calls left (a
 * reorg can take an integrator's back to 0; its notional then holds only the float's residue).
 */
export function parseLedgerDay(hash: Readonly<Record<string, string>>): LedgerDayTotal[] {
  const totals = new Map<string, LedgerDayTotal>();
  const of = (integratorId: string) => {
    const t = totals.get(integratorId) ?? { integratorId, swaps: 0, notional: 0, reverts: 0 };
    totals.set(integratorId, t);
    return t;
  };
  for (const [field, value] of Object.entries(hash)) {
    const n = Number(value);
    if (!Number.isFinite(n)) continue;
    if (field.startsWith(SWAPS)) of(field.slice(SWAPS.length)).swaps = n;
    else if (field.startsWith(NOTIONAL)) of(field.slice(NOTIONAL.length)).notional = n;
    else if (field.startsWith(REVERTS)) of(field.slice(REVERTS.length)).reverts = n;
  }
  return [...totals.values()].filter((t) => t.swaps > 0 || t.reverts > 0);
}
