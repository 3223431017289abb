/**
 * A chain's ledger read back by period (the swaps, ledger-entry.ts; the reverted calls,
 * ledger-revert.ts; the cursor, ledger-cursor.ts): what the operator's `markouts` and `fills` and
 * the gateway's `GET /v2/fills` read. The sets are scored by block number, which a period of
 * time does not name; block times never fall along the chain (the ledger refuses a block stamped
 * before its parent), so the records are in time order too and the period's first one is found
 * by a binary search over the set's ranks: about log2(n) single-member reads, then the period's
 * records page by page, never the whole ledger.
 */
import { parseLedgerCursor, type LedgerCursor } from './ledger-cursor';
import { parseLedgerEntry, type LedgerEntry } from './ledger-entry';
import { parseLedgerRevert, type LedgerRevert } from './ledger-revert';
import type { RedisClient } from '../redis/redis-client';
import type { RedisKeys } from '../redis/redis-keys';

const PAGE = 1_000;

export class LedgerReads {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: RedisKeys,
  ) {}

  /** The chain's swaps in blocks of [fromSeconds, toSeconds), in block order. */
  entries(chainId: number, fromSeconds: number, toSeconds: number): Promise<LedgerEntry[]> {
    return this.inPeriod(this.keys.ledger(chainId), parseLedgerEntry, fromSeconds, toSeconds);
  }

  /** The chain's reverted router calls in blocks of [fromSeconds, toSeconds), in block order. */
  reverts(chainId: number, fromSeconds: number, toSeconds: number): Promise<LedgerRevert[]> {
    return this.inPeriod(this.keys.ledgerReverts(chainId), parseLedgerRevert, fromSeconds, toSeconds);
  }

  /** The last block the chain's ledger holds (with its time, when the ledger wrote it), if any. */
  async cursor(chainId: number): Promise<LedgerCursor | undefined> {
    const raw = await this.redis.get(this.keys.ledgerCursor(chainId));
    return raw === null ? undefined : parseLedgerCursor(raw);
  }

  private async inPeriod<T extends { blockTime: number }>(
    key: string,
    parse: (json: string) => T,
    fromSeconds: number,
    toSeconds: number,
  ): Promise<T[]> {
    // The rank of the first record at or after `fromSeconds`.
    let lo = 0;
    let hi = await this.redis.zcard(key);
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const [json] = await this.redis.zrange(key, mid, mid);
      // Gone meanwhile (a reorg took the set's tail back): nothing at or after it.
      if (json === undefined) hi = mid;
      else if (parse(json).blockTime < fromSeconds) lo = mid + 1;
      else hi = mid;
    }
    const out: T[] = [];
    for (let rank = lo; ; rank += PAGE) {
      const page = await this.redis.zrange(key, rank, rank + PAGE - 1);
      for (const json of page) {
        const r = parse(json);
        if (r.blockTime >= toSeconds) return out;
        out.push(r);
      }
      if (page.length < PAGE) return out;
    }
  }
}
