/**
 * The chain's mid history in Redis (core's mid-history.ts): after each computed block, the best
 * bid and ask of every pair, and its reference price when the block's standing has one (the
 * feed's answer, believed: readable, stale or not), trimmed to MIDS_RETENTION_SECONDS by block time, in one script
 * (commands/pmmMidsWrite.lua). Replicas may record the same block twice: the record is replaced.
 */
import { commandsDir, luaCommand, midRecordJson, type BandRecord, type MidTop, type RedisClient } from '@pmm/core';
import type { PairOrderbook } from '@pmm/protocol';

const COMMANDS = commandsDir(__dirname, 2);

export interface MidStore {
  /** `band`: the block's standing against the references (undefined: no pair has one). */
  record(
    block: { number: number; timestamp: number; hash: string },
    pairs: readonly PairOrderbook[],
    band?: BandRecord,
  ): Promise<void>;
}

export function createMidStore(
  redis: RedisClient,
  opts: { keys: { mids: string; midTimes: string }; retentionSeconds: number },
): MidStore {
  const write = luaCommand<number>(redis, COMMANDS, 'pmmMidsWrite', 2);
  return {
    async record(block, pairs, band) {
      const tops: Record<string, MidTop> = {};
      for (const p of pairs) {
        const base = p.baseToken.toLowerCase();
        const ref = band?.pairs[base]?.referencePrice;
        tops[base] = { bid: p.bids[0]?.price ?? '', ask: p.asks[0]?.price ?? '', ...(ref ? { ref: String(ref) } : {}) };
      }
      const json = midRecordJson({ block: block.number, time: block.timestamp, hash: block.hash, pairs: tops });
      await write(
        opts.keys.mids,
        opts.keys.midTimes,
        String(block.number),
        String(block.timestamp),
        json,
        String(opts.retentionSeconds),
      );
    },
  };
}
