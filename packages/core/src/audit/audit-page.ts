/**
 * One page of a chain's audit trail (the stream `<prefix>:{<id>}:audit`, written by the signer,
 * audit-record.ts), filtered by integrator, user and signing time: what the operator's `audit` and
 * `fills` read page after page, and the gateway's `GET /v2/fills` one page per request. Its work
 * is bounded by `maxScan` stream entries whatever the filter keeps (the stream holds every
 * integrator's records), and its size by `maxRecords`; `next` says where the following page
 * starts when the range was not read to its end.
 */
import { parseAuditRecord, type AuditRecord } from './audit-record';
import type { RedisClient } from '../redis/redis-client';
import type { RedisKeys } from '../redis/redis-keys';

/** A record with the id of its stream entry (`<Redis ms>-<seq>`). */
export interface AuditEntry {
  id: string;
  record: AuditRecord;
}

export interface AuditPageRequest {
  chainId: number;
  integratorId?: string;
  /** Any case. */
  userAddress?: string;
  /** Unix ms, inclusive / exclusive, on the record's own `time`. */
  fromMs?: number;
  toMs?: number;
  /** Start after this stream entry id (the `next` of the page before). */
  after?: string;
  /** Stream entries read at most (kept or not). */
  maxScan: number;
  /** Records kept at most (default: maxScan). */
  maxRecords?: number;
}

export interface AuditPage {
  /** The records kept, in stream order. */
  entries: AuditEntry[];
  /** The last entry read, when the range goes on after it; undefined when the page ends the range. */
  next?: string;
}

/**
 * Stream ids carry Redis's clock, records the signer's: a time-range read widens the id range by
 * this much and then filters on the record's `time`, so a skewed clock loses nothing.
 */
export const AUDIT_CLOCK_SLACK_MS = 60_000;

type StreamPage = [id: string, fields: string[]][];

/** A stream entry as read (`XRANGE`'s id and fields) as an AuditEntry; throws when its record does not parse. */
export function auditEntryOf(id: string, fields: readonly string[]): AuditEntry {
  const json = fields[1];
  if (json === undefined) throw new Error(`audit entry ${id}: empty`);
  return { id, record: parseAuditRecord(json) };
}

/** Orders two stream ids (`<ms>-<seq>`, digits). */
function compareIds(a: string, b: string): number {
  const [am = '', as = ''] = a.split('-');
  const [bm = '', bs = ''] = b.split('-');
  return (
    am.length - bm.length ||
    (am < bm ? -1 : am > bm ? 1 : 0) ||
    as.length - bs.length ||
    (as < bs ? -1 : as > bs ? 1 : 0)
  );
}

/** Reads one page (see the module comment). */
export async function readAuditPage(redis: RedisClient, keys: RedisKeys, req: AuditPageRequest): Promise<AuditPage> {
  const user = req.userAddress?.toLowerCase();
  const maxRecords = req.maxRecords ?? req.maxScan;
  const lowest = req.fromMs === undefined ? '-' : `${Math.max(0, req.fromMs - AUDIT_CLOCK_SLACK_MS)}-0`;
  const end = req.toMs === undefined ? '+' : String(req.toMs + AUDIT_CLOCK_SLACK_MS);
  // After the cursor, never before the period's start (a cursor of another period reads this one's).
  let start =
    req.after !== undefined && (lowest === '-' || compareIds(req.after, lowest) >= 0) ? `(${req.after}` : lowest;
  const entries: AuditEntry[] = [];
  let scanned = 0;
  for (;;) {
    const count = Math.min(1_000, req.maxScan - scanned);
    const page = (await redis.xrange(keys.audit(req.chainId), start, end, 'COUNT', count)) as StreamPage;
    for (const [id, fields] of page) {
      scanned++;
      const entry = auditEntryOf(id, fields);
      const r = entry.record;
      const kept =
        (req.integratorId === undefined || r.integratorId === req.integratorId) &&
        (user === undefined || r.userAddress === user) &&
        (req.fromMs === undefined || r.time >= req.fromMs) &&
        (req.toMs === undefined || r.time < req.toMs);
      if (kept) entries.push(entry);
      // Full: the rest of the range is the next page's.
      if (entries.length >= maxRecords || scanned >= req.maxScan) return { entries, next: id };
    }
    if (page.length < count) return { entries };
    start = `(${page[page.length - 1]![0]}`;
  }
}
