/**
 * Each pair's transitions in and out of its band: the block where the band stopped letting a pair
 * be served (withheld, or in `watch` mode only reported) and the block where it let it again, with
 * the values that decided. The indexer appends them to the chain's log (`pmm:{<id>}:book:band:log`,
 * a stream, in the book's own script: only a book that is written adds them, so replicas never add
 * one twice), and `npm run risk -- history` shows them. The one definition of their form.
 */
import type { BandRecord, PairBandState } from './band-record';

/** How many transitions the log keeps per chain (the oldest are trimmed, approximately). */
export const BAND_LOG_MAX_ENTRIES = 10_000;
/** The field of a log entry that holds its transition (encodeBandTransition). */
export const BAND_LOG_FIELD = 'transition';

export interface BandTransition {
  /** The block that showed it, and its time (Unix s). */
  block: number;
  time: number;
  /** The pair's base token (lower case) and its symbol. */
  base: string;
  symbol: string;
  /** `out`: the band no longer lets the pair be served; `in`: it does again. */
  to: 'out' | 'in';
  /** The standing at that block: why (status), what it did (mode, withheld) and the values. */
  status: PairBandState['status'];
  mode: PairBandState['mode'];
  withheld: boolean;
  deviationBps?: number;
  ageSeconds?: number;
  referencePrice?: number;
  curvePrice?: number;
}

/**
 * The transitions `next` shows after `previous` (the record written with the book before): each
 * pair whose `served` changed, and a pair seen for the first time out of band (its standing starts
 * there). A pair seen for the first time in band is no transition.
 */
export function bandTransitions(
  previous: BandRecord | undefined,
  next: BandRecord,
  symbolOf: (base: string) => string,
): BandTransition[] {
  const out: BandTransition[] = [];
  for (const [base, state] of Object.entries(next.pairs)) {
    const before = previous?.pairs[base];
    if (before ? before.served === state.served : state.served) continue;
    const { status, mode, withheld, deviationBps, ageSeconds, referencePrice, curvePrice } = state;
    out.push({
      block: next.block,
      time: next.time,
      base,
      symbol: symbolOf(base),
      to: state.served ? 'in' : 'out',
      status,
      mode,
      withheld,
      ...(deviationBps !== undefined ? { deviationBps } : {}),
      ...(ageSeconds !== undefined ? { ageSeconds } : {}),
      ...(referencePrice !== undefined ? { referencePrice } : {}),
      ...(curvePrice !== undefined ? { curvePrice } : {}),
    });
  }
  return out;
}

export function encodeBandTransition(t: BandTransition): string {
  return JSON.stringify(t);
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The transition a text holds, or undefined when it is not one (a reader never throws on one). */
export function decodeBandTransition(text: string | null | undefined): BandTransition | undefined {
  if (!text) return undefined;
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!isObject(v) || !Number.isSafeInteger(v.block) || !Number.isSafeInteger(v.time)) return undefined;
  if (typeof v.base !== 'string' || !/^0x[0-9a-f]{40}$/.test(v.base) || typeof v.symbol !== 'string') return undefined;
  if (v.to !== 'out' && v.to !== 'in') return undefined;
  if (typeof v.status !== 'string' || typeof v.mode !== 'string' || typeof v.withheld !== 'boolean') return undefined;
  for (const field of ['deviationBps', 'ageSeconds', 'referencePrice', 'curvePrice'])
    if (v[field] !== undefined && typeof v[field] !== 'number') return undefined;
  return v as unknown as BandTransition;
}
