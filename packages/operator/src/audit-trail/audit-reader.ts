/**
 * Reads the audit trail back for the operator's `audit` and `settle` commands (the layout is
 * described in audit-trail.ts, its writer).
 */
import { auditDay, parseAuditRecord, type AuditRecord, type RedisClient, type RedisKeys } from '@pmm/core';

/** A record with the id of its stream entry (`<Redis ms>-<seq>`). */
export interface AuditEntry {
  id: string;
  record: AuditRecord;
}

export interface AuditFilter {
  chains: readonly number[];
  integratorId?: string;
  /** Any case. */
  userAddress?: string;
  /** Unix ms, inclusive / exclusive, on the record's own `time`. */
  fromMs?: number;
  toMs?: number;
}

/**
 * Stream ids carry Redis's clock, records the signer's: a time-range read widens the id range by
 * this much and then filters on the record's `time`, so a skewed clock loses nothing.
 */
const CLOCK_SLACK_MS = 60_000;
const PAGE = 1_000;

type StreamPage = [id: string, fields: string[]][];

function entryOf(id: string, fields: readonly string[]): AuditEntry {
  const json = fields[1];
  if (json === undefined) throw new Error(`audit entry ${id}: empty`);
  return { id, record: parseAuditRecord(json) };
}

export class AuditReader {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: RedisKeys,
  ) {}

  /**
   * The records of a signature on a chain. `timestamp` is the signed timestamp (a swap's
   * `quoteTimestamp`), which names the day's index. Usually one record; none when the signature
   * was not issued here or is older than the retention.
   */
  async bySignature(chainId: number, signature: string, timestamp: number): Promise<AuditEntry[]> {
    const sig = signature.toLowerCase();
    const ids = await this.redis.hget(this.keys.auditSignatures(chainId, auditDay(timestamp)), sig);
    if (!ids) return [];
    const out: AuditEntry[] = [];
    for (const id of ids.split(' ')) {
      const page = (await this.redis.xrange(this.keys.audit(chainId), id, id)) as StreamPage;
      for (const [entryId, fields] of page) {
        const entry = entryOf(entryId, fields);
        // The index names the entry; the check guards against a hand-edited index.
        if (entry.record.signature.toLowerCase() === sig) out.push(entry);
      }
    }
    return out;
  }

  /** Unix ms of the oldest record still kept on a chain (by its entry id), or undefined when none. */
  async oldest(chainId: number): Promise<number | undefined> {
    const page = (await this.redis.xrange(this.keys.audit(chainId), '-', '+', 'COUNT', 1)) as StreamPage;
    return page[0] ? Number(page[0][0].split('-')[0]) : undefined;
  }

  /** Every record matching the filter, chain by chain in the filter's order, each chain in stream order. */
  async *list(filter: AuditFilter): AsyncGenerator<AuditEntry> {
    const user = filter.userAddress?.toLowerCase();
    const from = filter.fromMs === undefined ? '-' : String(Math.max(0, filter.fromMs - CLOCK_SLACK_MS));
    const to = filter.toMs === undefined ? '+' : String(filter.toMs + CLOCK_SLACK_MS);
    for (const chainId of filter.chains) {
      let start = from;
      for (;;) {
        const page = (await this.redis.xrange(this.keys.audit(chainId), start, to, 'COUNT', PAGE)) as StreamPage;
        for (const [id, fields] of page) {
          const entry = entryOf(id, fields);
          const r = entry.record;
          if (filter.integratorId !== undefined && r.integratorId !== filter.integratorId) continue;
          if (user !== undefined && r.userAddress !== user) continue;
          if (filter.fromMs !== undefined && r.time < filter.fromMs) continue;
          if (filter.toMs !== undefined && r.time >= filter.toMs) continue;
          yield entry;
        }
        if (page.length < PAGE) break;
        start = `(${page[page.length - 1]![0]}`;
      }
    }
  }

  /**
   * The records of a chain whose quote the router still accepts at `nowSeconds` (deadline after
   * it), newest first: the exposure a halt cannot recall. Read backwards until the first record
   * past its deadline, as the deadline grows with the stream (one validity per chain); a record
   * without a deadline (written before it was kept) ends the read too.
   */
  async *live(chainId: number, nowSeconds: number): AsyncGenerator<AuditEntry> {
    let end = '+';
    for (;;) {
      const page = (await this.redis.xrevrange(this.keys.audit(chainId), end, '-', 'COUNT', PAGE)) as StreamPage;
      for (const [id, fields] of page) {
        const entry = entryOf(id, fields);
        // A minute of slack for the signer's clock against this one's, as in list().
        if ((entry.record.deadline ?? 0) * 1000 < nowSeconds * 1000 - CLOCK_SLACK_MS) return;
        if ((entry.record.deadline ?? 0) > nowSeconds) yield entry;
      }
      if (page.length < PAGE) return;
      end = `(${page[page.length - 1]![0]}`;
    }
  }
}
