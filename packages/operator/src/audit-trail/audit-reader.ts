/**
 * Reads the audit trail back for the operator's `audit`, `settle`, `fills` and `risk` commands
 * (the layout is described in audit-trail.ts, its writer; a period's pages are core's audit-page.ts).
 */
import {
  AUDIT_CLOCK_SLACK_MS,
  auditDay,
  auditEntryOf,
  readAuditPage,
  type AuditEntry,
  type RedisClient,
  type RedisKeys,
} from '@pmm/core';

export type { AuditEntry };

export interface AuditFilter {
  chains: readonly number[];
  integratorId?: string;
  /** Any case. */
  userAddress?: string;
  /** Unix ms, inclusive / exclusive, on the record's own `time`. */
  fromMs?: number;
  toMs?: number;
}

const PAGE = 1_000;

type StreamPage = [id: string, fields: string[]][];

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
        const entry = auditEntryOf(entryId, fields);
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
    const { chains, ...rest } = filter;
    for (const chainId of chains) {
      let after: string | undefined;
      do {
        const page = await readAuditPage(this.redis, this.keys, { ...rest, chainId, after, maxScan: PAGE });
        yield* page.entries;
        after = page.next;
      } while (after !== undefined);
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
        const entry = auditEntryOf(id, fields);
        // A minute of slack for the signer's clock against this one's, as in list().
        if ((entry.record.deadline ?? 0) * 1000 < nowSeconds * 1000 - AUDIT_CLOCK_SLACK_MS) return;
        if ((entry.record.deadline ?? 0) > nowSeconds) yield entry;
      }
      if (page.length < PAGE) return;
      end = `(${page[page.length - 1]![0]}`;
    }
  }
}
