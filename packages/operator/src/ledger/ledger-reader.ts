/**
 * Reads the maker's ledger and the mid history back for `markouts` and `fills` (written by the
 * ledger and the indexer: core's ledger-entry.ts, ledger-revert.ts, ledger-cursor.ts and
 * mid-history.ts): the ledger by period as core's ledger-reads.ts reads it (the gateway's
 * `GET /v2/fills` too), and the mids.
 */
import { LedgerReads, parseMidRecord, type MidRecord, type RedisClient, type RedisKeys } from '@pmm/core';

const PAGE = 1_000;

export class LedgerReader extends LedgerReads {
  /**
   * `records`: the ledger's server; `midsConnection`: REDIS_URL's, the mid history's (the same
   * connection on one server), asked for only when mids are read.
   */
  constructor(
    records: RedisClient,
    private readonly midsConnection: () => Promise<RedisClient>,
    private readonly midKeys: RedisKeys,
  ) {
    super(records, midKeys);
  }

  /** The chain's mid records of blocks [fromBlock, toBlock], in block order. */
  async mids(chainId: number, fromBlock: number, toBlock: number): Promise<MidRecord[]> {
    const out: MidRecord[] = [];
    const redis = await this.midsConnection();
    for (let offset = 0; ; offset += PAGE) {
      const page = await redis.zrangebyscore(this.midKeys.mids(chainId), fromBlock, toBlock, 'LIMIT', offset, PAGE);
      for (const json of page) out.push(parseMidRecord(json));
      if (page.length < PAGE) return out;
    }
  }
}
