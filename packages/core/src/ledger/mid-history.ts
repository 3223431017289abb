/**
 * The mid history: each pair's best bid and best ask at each block the indexer computed, and the
 * pair's reference price at that block when it has one (core's reference/), kept for
 * MIDS_RETENTION_SECONDS so that markouts, against the maker's own mid and against the reference,
 * need no archive node. Written by the indexer
 * (store/mid-store.ts), read by the ledger and the operator's `markouts`; this file is the one
 * place that maps a record to its stored JSON and back.
 */

/** One block's tops of book. */
export interface MidRecord {
  block: number;
  /** Unix seconds of the block. */
  time: number;
  hash: string;
  /**
   * By base token (lowercase): best bid and best ask, quote per base, decimal strings; '' when the
   * side is empty. `ref`: the pair's reference price (quote per base, decimal string) as its feed
   * answered at the block, stale or not; absent when the pair has no reference or its feed's
   * answer could not be believed (unreadable).
   */
  pairs: Record<string, MidTop>;
}

/** One pair's tops of book at a block, and its reference then. */
export interface MidTop {
  bid: string;
  ask: string;
  ref?: string;
}

export function midRecordJson(r: MidRecord): string {
  return JSON.stringify({ block: r.block, time: r.time, hash: r.hash, pairs: r.pairs });
}

/** Reads a stored record back; throws naming what is wrong. */
export function parseMidRecord(json: string): MidRecord {
  const v = JSON.parse(json) as Partial<MidRecord>;
  if (typeof v !== 'object' || v === null) throw new Error('mid record: not an object');
  if (!Number.isSafeInteger(v.block) || !Number.isSafeInteger(v.time)) throw new Error('mid record: block or time');
  if (typeof v.hash !== 'string' || typeof v.pairs !== 'object' || v.pairs === null)
    throw new Error('mid record: hash or pairs');
  return v as MidRecord;
}

/**
 * The mid of a pair in a record: the midpoint of best bid and best ask, as a number (markouts are
 * statistics; the exact decimals stay in the record). Undefined when a side is empty.
 */
export function midOf(r: MidRecord, base: string): number | undefined {
  const top = r.pairs[base.toLowerCase()];
  if (!top || top.bid === '' || top.ask === '') return undefined;
  return (Number(top.bid) + Number(top.ask)) / 2;
}

/** The pair's reference price in a record, as a number; undefined when the record has none for it. */
export function referenceOf(r: MidRecord, base: string): number | undefined {
  const ref = r.pairs[base.toLowerCase()]?.ref;
  const price = ref === undefined || ref === '' ? NaN : Number(ref);
  return Number.isFinite(price) && price > 0 ? price : undefined;
}
