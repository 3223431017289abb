/**
 * The chain's ledger in Redis: its swaps (a sorted set scored by block number, core's
 * ledger-entry.ts), the hashes of the recent blocks it read, and its cursor, the last block it
 * holds. A block is committed whole in one MULTI: its swaps replace whatever the set held at that
 * height, its hash is recorded and the cursor moves, so a ledger killed at any moment resumes
 * after its cursor without a gap or a duplicate. A reorg rolls back to the fork point the same way.
 */
import { ledgerEntryJson, type LedgerEntry, type RedisClient } from '@pmm/core';

export interface LedgerCursor {
  number: number;
  hash: string;
}

export interface LedgerStore {
  cursor(): Promise<LedgerCursor | undefined>;
  /** The hash the ledger read at `number`, when it still remembers it (the last `keepHashes` blocks). */
  hashAt(number: number): Promise<string | undefined>;
  /** Records block `number` (hash `hash`) with its swaps and moves the cursor to it. */
  commit(number: number, hash: string, entries: readonly LedgerEntry[]): Promise<void>;
  /** Forgets every block above `to` (a reorg's orphans) and moves the cursor back to `to`. Returns the swaps removed. */
  rollback(to: LedgerCursor): Promise<number>;
}

export interface LedgerKeys {
  ledger: string;
  cursor: string;
  blocks: string;
}

export function createLedgerStore(redis: RedisClient, keys: LedgerKeys, keepHashes: number): LedgerStore {
  return {
    async cursor() {
      const raw = await redis.get(keys.cursor);
      return raw ? (JSON.parse(raw) as LedgerCursor) : undefined;
    },
    async hashAt(number) {
      return (await redis.hget(keys.blocks, String(number))) ?? undefined;
    },
    async commit(number, hash, entries) {
      const tx = redis.multi();
      tx.zremrangebyscore(keys.ledger, number, number);
      for (const e of entries) tx.zadd(keys.ledger, number, ledgerEntryJson(e));
      tx.hset(keys.blocks, String(number), hash);
      // One block's hash leaves as each new one comes: the hash keeps `keepHashes` blocks.
      tx.hdel(keys.blocks, String(number - keepHashes));
      tx.set(keys.cursor, JSON.stringify({ number, hash } satisfies LedgerCursor));
      const results = await tx.exec();
      const failed = results?.find(([err]) => err);
      if (!results || failed) throw failed?.[0] ?? new Error('ledger commit: transaction aborted');
    },
    async rollback(to) {
      const orphans = (await redis.hkeys(keys.blocks)).filter((n) => Number(n) > to.number);
      const tx = redis.multi();
      tx.zremrangebyscore(keys.ledger, `(${to.number}`, '+inf');
      if (orphans.length > 0) tx.hdel(keys.blocks, ...orphans);
      tx.set(keys.cursor, JSON.stringify(to));
      const results = await tx.exec();
      const failed = results?.find(([err]) => err);
      if (!results || failed) throw failed?.[0] ?? new Error('ledger rollback: transaction aborted');
      return Number(results[0]![1]);
    },
  };
}
