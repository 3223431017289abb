/**
 * Reads the maker's ledger and the mid history back for `markouts` and `fills` (written by the
 * ledger and the indexer: core's ledger-entry.ts, ledger-revert.ts, ledger-cursor.ts and
 * mid-history.ts).
 */
import {
  parseLedgerCursor,
  parseLedgerEntry,
  parseLedgerRevert,
  parseMidRecord,
  type LedgerCursor,
  type LedgerEntry,
  type LedgerRevert,
  type MidRecord,
  type RedisClient,
  type RedisKeys,
} from '@pmm/core';

const PAGE = 1_000;

export class LedgerReader {
  /**
   * `records`: the ledger's server; `midsConnection`: REDIS_URL's, the mid history's (the same
   * connection on one server), asked for only when mids are read.
   */
  constructor(
    private readonly records: RedisClient,
    private readonly midsConnection: () => Promise<RedisClient>,
    private readonly keys: RedisKeys,
  ) {}

  private async *range(redis: RedisClient, key: string, from: number, to: number): AsyncGenerator<string> {
    for (let offset = 0; ; offset += PAGE) {
      const page = await redis.zrangebyscore(key, from, to, 'LIMIT', offset, PAGE);
      yield* page;
      if (page.length < PAGE) return;
    }
  }

  /** The records of a set scored by block number whose blocks are in [fromSeconds, toSeconds), in block order. */
  private async inPeriod<T extends { blockTime: number }>(
    key: string,
    parse: (json: string) => T,
    fromSeconds: number,
    toSeconds: number,
  ): Promise<T[]> {
    const out: T[] = [];
    // Scored by block number, which the period does not name: the times are in the records.
    for await (const json of this.range(this.records, key, 0, Number.MAX_SAFE_INTEGER)) {
      const r = parse(json);
      if (r.blockTime >= fromSeconds && r.blockTime < toSeconds) out.push(r);
    }
    return out;
  }

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
    const raw = await this.records.get(this.keys.ledgerCursor(chainId));
    return raw === null ? undefined : parseLedgerCursor(raw);
  }

  /** The chain's mid records of blocks [fromBlock, toBlock], in block order. */
  async mids(chainId: number, fromBlock: number, toBlock: number): Promise<MidRecord[]> {
    const out: MidRecord[] = [];
    const redis = await this.midsConnection();
    for await (const json of this.range(redis, this.keys.mids(chainId), fromBlock, toBlock))
      out.push(parseMidRecord(json));
    return out;
  }
}
