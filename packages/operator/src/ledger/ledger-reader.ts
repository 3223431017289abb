/**
 * Reads the maker's ledger and the mid history back for `markouts` (written by the ledger and
 * the indexer: core's ledger-entry.ts and mid-history.ts).
 */
import {
  parseLedgerEntry,
  parseMidRecord,
  type LedgerEntry,
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

  /** The chain's swaps in blocks of [fromSeconds, toSeconds), in block order. */
  async entries(chainId: number, fromSeconds: number, toSeconds: number): Promise<LedgerEntry[]> {
    const out: LedgerEntry[] = [];
    // Scored by block number, which the period does not name: the times are in the entries.
    for await (const json of this.range(this.records, this.keys.ledger(chainId), 0, Number.MAX_SAFE_INTEGER)) {
      const e = parseLedgerEntry(json);
      if (e.blockTime >= fromSeconds && e.blockTime < toSeconds) out.push(e);
    }
    return out;
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
