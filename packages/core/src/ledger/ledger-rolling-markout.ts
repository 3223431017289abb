/**
 * Each integrator's rolling markout: the 60 s markout (basis points, from the maker's side) of
 * its last 100 swaps whose horizon has passed. The ledger computes it as the chain moves on and
 * exports its mean (`ledger_markout_60s_bps`, the ToxicFlow alert); it also keeps the values in
 * Redis (a hash, integrator → this JSON) so that a restarted ledger goes on from them and the
 * operator console shows the same figure. This file is the one place that maps them to the
 * stored JSON and back.
 */

/** The horizon of the rolling markout, seconds after the swap's block. */
export const LEDGER_MARKOUT_HORIZON_SECONDS = 60;
/** How many of an integrator's latest swaps the rolling markout averages. */
export const LEDGER_ROLLING_SWAPS = 100;

const finite = (bps: readonly number[]): number[] => bps.filter((x) => Number.isFinite(x));

/**
 * The stored form of an integrator's values, oldest first (at most LEDGER_ROLLING_SWAPS). A value
 * that is not a finite number is left out (JSON would write it as null).
 */
export function rollingMarkoutJson(bps: readonly number[]): string {
  return JSON.stringify({ bps: finite(bps).slice(-LEDGER_ROLLING_SWAPS) });
}

/**
 * Reads the stored values back; throws naming what is wrong. A null is left out: it is an
 * infinite markout (a swap with a zero leg) that a ledger before this rule wrote, and the rest
 * of the list still holds.
 */
export function parseRollingMarkout(json: string): number[] {
  const v = JSON.parse(json) as { bps?: unknown };
  if (typeof v !== 'object' || v === null || !Array.isArray(v.bps))
    throw new Error('rolling markout: bps is not a list');
  const values = v.bps.filter((x) => x !== null);
  if (!values.every((x) => typeof x === 'number' && Number.isFinite(x)))
    throw new Error('rolling markout: a value is not a number');
  return (values as number[]).slice(-LEDGER_ROLLING_SWAPS);
}

/** The mean of the values (finite ones only), or null when there is none. */
export function rollingMean(bps: readonly number[]): number | null {
  const values = finite(bps);
  return values.length === 0 ? null : values.reduce((a, b) => a + b, 0) / values.length;
}
