/**
 * Each integrator's rolling markout: the 60 s markout (basis points, from the maker's side) of
 * its last 100 swaps whose horizon has passed, against the maker's own mid and, beside it,
 * against the pair's reference (swaps of pairs with one: a curve that stopped moving marks its own
 * losses at zero, the reference does not). The ledger computes both as the chain moves on and
 * exports their means (`ledger_markout_60s_bps`, the ToxicFlow alert, and
 * `ledger_reference_markout_60s_bps`); it also keeps the values in
 * Redis (a hash, integrator → this JSON) so that a restarted ledger goes on from them and the
 * operator console shows the same figure. This file is the one place that maps them to the
 * stored JSON and back.
 */

/** The horizon of the rolling markout, seconds after the swap's block. */
export const LEDGER_MARKOUT_HORIZON_SECONDS = 60;
/** How many of an integrator's latest swaps the rolling markout averages. */
export const LEDGER_ROLLING_SWAPS = 100;

const finite = (bps: readonly number[]): number[] => bps.filter((x) => Number.isFinite(x));

/** An integrator's values, oldest first: against its own mid, and against the reference. */
export interface RollingMarkout {
  bps: number[];
  referenceBps: number[];
}

/**
 * The stored form of an integrator's values, oldest first (at most LEDGER_ROLLING_SWAPS of each).
 * A value that is not a finite number is left out (JSON would write it as null).
 */
export function rollingMarkoutJson(values: { bps: readonly number[]; referenceBps: readonly number[] }): string {
  return JSON.stringify({
    bps: finite(values.bps).slice(-LEDGER_ROLLING_SWAPS),
    referenceBps: finite(values.referenceBps).slice(-LEDGER_ROLLING_SWAPS),
  });
}

/** One stored list: a null is left out (see parseRollingMarkout). */
function storedList(list: unknown, name: string): number[] {
  if (!Array.isArray(list)) throw new Error(`rolling markout: ${name} is not a list`);
  const values = list.filter((x) => x !== null);
  if (!values.every((x) => typeof x === 'number' && Number.isFinite(x)))
    throw new Error('rolling markout: a value is not a number');
  return (values as number[]).slice(-LEDGER_ROLLING_SWAPS);
}

/**
 * Reads the stored values back; throws naming what is wrong. A null is left out: it is an
 * infinite markout (a swap with a zero leg) that a ledger before this rule wrote, and the rest
 * of the list still holds. A value stored before the reference's list existed has none yet.
 */
export function parseRollingMarkout(json: string): RollingMarkout {
  const v = JSON.parse(json) as { bps?: unknown; referenceBps?: unknown };
  if (typeof v !== 'object' || v === null) throw new Error('rolling markout: bps is not a list');
  return {
    bps: storedList(v.bps, 'bps'),
    referenceBps: v.referenceBps === undefined ? [] : storedList(v.referenceBps, 'referenceBps'),
  };
}

/** The mean of the values (finite ones only), or null when there is none. */
export function rollingMean(bps: readonly number[]): number | null {
  const values = finite(bps);
  return values.length === 0 ? null : values.reduce((a, b) => a + b, 0) / values.length;
}
