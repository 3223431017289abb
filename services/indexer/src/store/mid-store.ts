/**
 * The chain's mid history in Redis (core's mid-history.ts): after each computed block, the best
 * bid and ask of every pair, trimmed to MIDS_RETENTION_SECONDS by block time, in one script
 * (commands/pmmMidsWrite.lua). Replicas may record the same block twice: the record is replaced.
 */
import { commandsDir, luaCommand, midRecordJson, type RedisClient } from '@pmm/core';
import type { PairOrderbook } from '@pmm/protocol';

const COMMANDS = commandsDir(__dirname, 2);

export interface MidStore {
  record(block: { number: number; timestamp: number; hash: string }, pairs: readonly PairOrderbook[]): Promise<void>;
}

export function createMidStore(
  redis: RedisClient,
  opts: { keys: { mids: string; midTimes: string }; retentionSeconds: number },
): MidStore {
  const write = luaCommand<number>(redis, COMMANDS, 'pmmMidsWrite', 2);
  return {
    async record(block, pairs) {
      const tops: Record<string, { bid: string; ask: string }> = {};
      for (const p of pairs)
        tops[p.baseToken.toLowerCase()] = { bid: p.bids[0]?.price ?? '', ask: p.asks[0]?.price ?? '' };
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
