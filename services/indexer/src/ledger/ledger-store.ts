/**
 * The chain's ledger in Redis: its swaps and its reverted router calls (sorted sets scored by
 * block number, core's ledger-entry.ts and ledger-revert.ts), the hashes of the recent blocks it read, its cursor, the last block it
 * holds, and each UTC day's totals per integrator (core's ledger-day-totals.ts). A block is
 * committed whole in one MULTI: its swaps and reverts replace whatever the sets held at that height, its
 * swaps, reverts and the firm signatures judged at it (deadline-fates.ts) are added to their day's totals, its hash is recorded and the cursor moves, so a ledger
 * killed at any moment resumes after its cursor without a gap or a duplicate. A reorg rolls back
 * to the fork point the same way, taking the orphans (and the judgements made in them) out of the totals. The ledger is the single
 * writer of its chain (one process per chain): the totals count each committed block once
 * because nothing else commits it.
 */
import {
  LEDGER_DAY_TTL_SECONDS,
  ledgerCursorJson,
  ledgerDayIncrements,
  ledgerEntryJson,
  ledgerRevertJson,
  parseLedgerCursor,
  parseLedgerEntry,
  parseLedgerRevert,
  type LedgerCursor,
  type LedgerDayFate,
  type LedgerEntry,
  type LedgerRevert,
  type RedisClient,
  type RedisKeys,
} from '@pmm/core';

export interface LedgerStore {
  cursor(): Promise<LedgerCursor | undefined>;
  /** The hash the ledger read at `number`, when it still remembers it (the last `keepHashes` blocks). */
  hashAt(number: number): Promise<string | undefined>;
  /**
   * Records `block` (its number, hash and time) with its swaps and reverted calls, adds them and
   * the signatures judged at it to their day's totals and moves the cursor to it.
   */
  commit(
    block: Required<LedgerCursor>,
    entries: readonly LedgerEntry[],
    reverts: readonly LedgerRevert[],
    fates?: readonly LedgerDayFate[],
  ): Promise<void>;
  /**
   * Forgets every block above `to` (a reorg's orphans), takes their swaps out of the totals and
   * moves the cursor back to `to`, taking out the judgements `undone` (those made in the orphans).
   * Returns the swaps and the reverted calls removed.
   */
  rollback(to: LedgerCursor, undone?: readonly LedgerDayFate[]): Promise<{ swaps: number; reverts: number }>;
}

export interface LedgerKeys {
  ledger: string;
  reverts: string;
  cursor: string;
  blocks: string;
  /** The totals of a Unix day. */
  day: (day: number) => string;
}

/** The chain's ledger keys (core's redis-keys.ts), as the store takes them. */
export function ledgerStoreKeys(keys: RedisKeys, chainId: number): LedgerKeys {
  return {
    ledger: keys.ledger(chainId),
    reverts: keys.ledgerReverts(chainId),
    cursor: keys.ledgerCursor(chainId),
    blocks: keys.ledgerBlocks(chainId),
    day: (day) => keys.ledgerDay(chainId, day),
  };
}

type Transaction = ReturnType<RedisClient['multi']>;

/** Adds (or takes back) the entries' swaps and notional, the reverted calls and the judged signatures to the totals of their days, in `tx`. */
function addToDays(
  tx: Transaction,
  keys: LedgerKeys,
  entries: readonly LedgerEntry[],
  reverts: readonly LedgerRevert[],
  sign: 1 | -1,
  fates: readonly LedgerDayFate[] = [],
): void {
  const days = new Set<number>();
  for (const inc of ledgerDayIncrements(entries, sign, reverts, fates)) {
    if (inc.kind === 'count') tx.hincrby(keys.day(inc.day), inc.field, inc.by);
    else tx.hincrbyfloat(keys.day(inc.day), inc.field, inc.by);
    days.add(inc.day);
  }
  for (const day of days) tx.expire(keys.day(day), LEDGER_DAY_TTL_SECONDS);
}

export function createLedgerStore(redis: RedisClient, keys: LedgerKeys, keepHashes: number): LedgerStore {
  return {
    async cursor() {
      const raw = await redis.get(keys.cursor);
      return raw ? parseLedgerCursor(raw) : undefined;
    },
    async hashAt(number) {
      return (await redis.hget(keys.blocks, String(number))) ?? undefined;
    },
    async commit(block, entries, reverts, fates = []) {
      const { number, hash } = block;
      // What the set holds at this height (nothing, unless the block is committed again) leaves
      // the totals as it leaves the set.
      const replaced = (await redis.zrangebyscore(keys.ledger, number, number)).map(parseLedgerEntry);
      const replacedReverts = (await redis.zrangebyscore(keys.reverts, number, number)).map(parseLedgerRevert);
      const tx = redis.multi();
      tx.zremrangebyscore(keys.ledger, number, number);
      for (const e of entries) tx.zadd(keys.ledger, number, ledgerEntryJson(e));
      tx.zremrangebyscore(keys.reverts, number, number);
      for (const r of reverts) tx.zadd(keys.reverts, number, ledgerRevertJson(r));
      addToDays(tx, keys, replaced, replacedReverts, -1);
      addToDays(tx, keys, entries, reverts, 1, fates);
      tx.hset(keys.blocks, String(number), hash);
      // One block's hash leaves as each new one comes: the hash keeps `keepHashes` blocks.
      tx.hdel(keys.blocks, String(number - keepHashes));
      tx.set(keys.cursor, ledgerCursorJson(block));
      const results = await tx.exec();
      const failed = results?.find(([err]) => err);
      if (!results || failed) throw failed?.[0] ?? new Error('ledger commit: transaction aborted');
    },
    async rollback(to, undone = []) {
      const orphans = (await redis.hkeys(keys.blocks)).filter((n) => Number(n) > to.number);
      const removed = (await redis.zrangebyscore(keys.ledger, `(${to.number}`, '+inf')).map(parseLedgerEntry);
      const removedReverts = (await redis.zrangebyscore(keys.reverts, `(${to.number}`, '+inf')).map(parseLedgerRevert);
      const tx = redis.multi();
      tx.zremrangebyscore(keys.ledger, `(${to.number}`, '+inf');
      tx.zremrangebyscore(keys.reverts, `(${to.number}`, '+inf');
      addToDays(tx, keys, removed, removedReverts, -1, undone);
      if (orphans.length > 0) tx.hdel(keys.blocks, ...orphans);
      tx.set(keys.cursor, ledgerCursorJson(to));
      const results = await tx.exec();
      const failed = results?.find(([err]) => err);
      if (!results || failed) throw failed?.[0] ?? new Error('ledger rollback: transaction aborted');
      return { swaps: Number(results[0]![1]), reverts: Number(results[1]![1]) };
    },
  };
}
