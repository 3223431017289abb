/**
 * The operator console's ledger table for one chain: each integrator's executed swaps,
 * notional, reverted router calls, and fill rate and unused share of its firm signatures judged
 * (docs/operations/ledger.md#live-figures) of the current UTC day (on the gateway's clock), with its rolling 60 s markout, as
 * the chain's ledger keeps them in Redis (core's ledger-day-totals.ts and
 * ledger-rolling-markout.ts), and the last block the ledger holds (its cursor). Three reads per
 * chain whatever the day's volume: a GET and two HGETALLs of small hashes; never the swaps.
 */
import {
  ledgerDay,
  ledgerDayName,
  parseLedgerCursor,
  parseLedgerDay,
  parseRollingMarkout,
  rollingMean,
  type RollingMarkout,
  type RedisClient,
  type RedisKeys,
} from '@pmm/core';

export interface ConsoleLedgerRow {
  /** '' for the swaps no signature of ours explains (listed apart by the ledger). */
  integratorId: string;
  swaps: number;
  /** Quote token units (the chain's quote token). */
  notional: number;
  /** Router calls that reverted that day (docs/operations/ledger.md#reverted-calls). */
  reverts: number;
  /** Firm signatures judged that day at their deadline, and those executed and unused. */
  firm: number;
  firmExecuted: number;
  firmUnused: number;
  /** firmExecuted / firm, firmUnused / firm; null without firm signatures judged. */
  fillRate: number | null;
  unusedShare: number | null;
  /** Mean 60 s markout of its last swaps (at most 100), bps from the maker's side; null before the first. */
  markout60sBps: number | null;
  /** Swaps behind that mean. */
  markoutSwaps: number;
  /** The same against each pair's reference (its swaps of pairs with one). */
  referenceMarkout60sBps: number | null;
  referenceMarkoutSwaps: number;
}

export interface ConsoleLedger {
  /** The UTC day of the totals, `2026-11-05`. */
  day: string;
  /** The last block the ledger holds; null when no ledger has written on this chain. */
  block: number | null;
  /** Integrators with swaps, reverted calls or firm signatures judged that day, largest notional first. */
  integrators: ConsoleLedgerRow[];
}

/** Reads the chain's ledger table; rejects when Redis cannot be read. */
export async function readConsoleLedger(
  redis: RedisClient,
  keys: RedisKeys,
  chainId: number,
  nowMs = Date.now(),
): Promise<ConsoleLedger> {
  const day = ledgerDay(Math.floor(nowMs / 1_000));
  const [cursor, totals, markouts] = await Promise.all([
    redis.get(keys.ledgerCursor(chainId)),
    redis.hgetall(keys.ledgerDay(chainId, day)),
    redis.hgetall(keys.ledgerMarkouts(chainId)),
  ]);
  const none = { bps: [], referenceBps: [] };
  const rolling = (integratorId: string): RollingMarkout => {
    const json = markouts[integratorId];
    if (json === undefined) return none;
    try {
      return parseRollingMarkout(json);
    } catch {
      return none; // unreadable: shown as no markout yet, never as a wrong one
    }
  };
  let block: number | null = null;
  try {
    block = cursor === null ? null : parseLedgerCursor(cursor).number;
  } catch {
    // An unreadable cursor: the block is unknown.
  }
  const integrators = parseLedgerDay(totals).map((t) => {
    const { bps, referenceBps } = rolling(t.integratorId);
    return {
      ...t,
      fillRate: t.firm > 0 ? t.firmExecuted / t.firm : null,
      unusedShare: t.firm > 0 ? t.firmUnused / t.firm : null,
      markout60sBps: rollingMean(bps),
      markoutSwaps: bps.length,
      referenceMarkout60sBps: rollingMean(referenceBps),
      referenceMarkoutSwaps: referenceBps.length,
    };
  });
  integrators.sort((a, b) =>
    b.notional !== a.notional ? b.notional - a.notional : a.integratorId < b.integratorId ? -1 : 1,
  );
  return { day: ledgerDayName(day), block, integrators };
}
