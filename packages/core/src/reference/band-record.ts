/**
 * Each pair's standing against its reference at the chain's served book: the record the indexer
 * writes with every book (the book's side key `pmm:{<id>}:book:band`, in the same script, with the
 * same expiry: it never outlives the book it describes), and that the next block's computation
 * and the signer read. The one definition of its form.
 *
 * Only pairs that have a reference appear. `withheld` is what the book and the signer obey: the
 * pair is out of the book and its signs are refused. A pair in `watch` mode is never withheld,
 * whatever its status.
 */
import type { ReferenceMode } from './pair-reference';

/**
 * in_band: fresh, readable, and the curve's mid within the band; out_of_band: outside it (see the
 * deviation); stale: the reference is older than its limit; unreadable: the feed's answer is
 * missing, malformed, not positive, older than the round before or from the future; no_curve: the
 * book has no price for the pair (no level on either side).
 */
export type ReferenceStatus = 'in_band' | 'out_of_band' | 'stale' | 'unreadable' | 'no_curve';

export const REFERENCE_STATUSES: readonly ReferenceStatus[] = [
  'in_band',
  'out_of_band',
  'stale',
  'unreadable',
  'no_curve',
];

export interface PairBandState {
  status: ReferenceStatus;
  mode: ReferenceMode;
  /** Out of the book and refused at the signer (only in `enforce` mode). */
  withheld: boolean;
  /** Whether the band lets the pair be served (in watch mode too: what enforce would do). */
  served: boolean;
  /** While not served: consecutive computed blocks back in band so far. */
  streak: number;
  /** The block where `served` last changed (or first seen). */
  since: number;
  /** The curve's mid against the reference, signed bps (positive: above), when both are known. */
  deviationBps?: number;
  /** The block's time less the reference's updatedAt, s, when readable. */
  ageSeconds?: number;
  /** The last round accepted (decimal text) and its updatedAt: a later answer may not go back. */
  roundId?: string;
  updatedAt?: number;
  /** The reference as a price (quote tokens per base token), when readable. */
  referencePrice?: number;
  /** The curve's mid as a price, when the book has one. */
  curvePrice?: number;
  /** The pair's band, bps either side of the reference (the signer holds a firm quote's price to it). */
  maxDeviationBelowBps: number;
  maxDeviationAboveBps: number;
  /** While withheld: seconds until it could be served again at the earliest (recovery blocks left × block time). */
  retryAfterSeconds?: number;
}

export interface BandRecord {
  /** The block of the book the record was written with, and its time (Unix s). */
  block: number;
  time: number;
  /** By base token address, lower case. */
  pairs: Record<string, PairBandState>;
}

export function encodeBandRecord(record: BandRecord): string {
  return JSON.stringify(record);
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The record a text holds, or undefined when it is not one (a reader never throws on one). */
export function decodeBandRecord(text: string | null | undefined): BandRecord | undefined {
  if (!text) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!isObject(value) || !Number.isSafeInteger(value.block) || !Number.isSafeInteger(value.time)) return undefined;
  if (!isObject(value.pairs)) return undefined;
  for (const [base, p] of Object.entries(value.pairs)) {
    if (!/^0x[0-9a-f]{40}$/.test(base) || !isObject(p)) return undefined;
    if (!REFERENCE_STATUSES.includes(p.status as ReferenceStatus)) return undefined;
    if (typeof p.withheld !== 'boolean' || typeof p.served !== 'boolean') return undefined;
    if (!Number.isSafeInteger(p.streak) || !Number.isSafeInteger(p.since)) return undefined;
    if (typeof p.maxDeviationBelowBps !== 'number' || typeof p.maxDeviationAboveBps !== 'number') return undefined;
    if (p.referencePrice !== undefined && !(typeof p.referencePrice === 'number' && p.referencePrice > 0))
      return undefined;
  }
  return value as unknown as BandRecord;
}
