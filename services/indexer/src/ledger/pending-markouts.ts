/**
 * Swaps waiting for one markout horizon to pass, and their markouts once it has, read from the
 * indexer's mid history as `npm run markouts` reads it (settlement markouts.ts `recordAt`): the
 * book of the last block at or before the target block or time, once the history has reached the
 * target. The history is the indexer's, so a markout waits for the indexer too, not only for the
 * chain. A swap whose book had an empty side (no mid) gets none.
 *
 * The ledger keeps two: the 60 s markout behind its metric, and the markout limit's horizon.
 */
import { midOf, parseMidRecord, type LedgerEntry, type MidRecord, type RedisClient } from '@pmm/core';
import {
  HORIZONS,
  markoutBps,
  markoutTarget,
  targetReached,
  type Horizon,
  type HorizonKey,
  type MarkoutTarget,
} from '@pmm/settlement';

/** The mid history as the ledger reads it. */
export interface MidHistory {
  /** The newest record's block and time; undefined while the history is empty. */
  latest(): Promise<{ block: number; time: number } | undefined>;
  /** The last record at or before the target. */
  atOrBefore(target: MarkoutTarget): Promise<MidRecord | undefined>;
}

/** The chain's mid history in Redis (core redis-keys.ts `mids`, and `midTimes` to find a time). */
export function redisMidHistory(redis: RedisClient, keys: { mids: string; midTimes: string }): MidHistory {
  const recordOf = async (block: number): Promise<MidRecord | undefined> => {
    const [json] = await redis.zrangebyscore(keys.mids, block, block);
    return json === undefined ? undefined : parseMidRecord(json);
  };
  return {
    async latest() {
      const [block, time] = await redis.zrevrange(keys.midTimes, 0, 0, 'WITHSCORES');
      return block === undefined ? undefined : { block: Number(block), time: Number(time) };
    },
    async atOrBefore(target) {
      if ('block' in target) {
        const [json] = await redis.zrevrangebyscore(keys.mids, target.block, '-inf', 'LIMIT', 0, 1);
        return json === undefined ? undefined : parseMidRecord(json);
      }
      const [block] = await redis.zrevrangebyscore(keys.midTimes, target.time, '-inf', 'LIMIT', 0, 1);
      return block === undefined ? undefined : recordOf(Number(block));
    },
  };
}

export class PendingMarkouts {
  private pending: LedgerEntry[] = [];
  private readonly horizon: Horizon;
  private settling: Promise<void> | undefined;
  private again = false;
  /** The newest swap's block time: a swap that waited `maxWaitSeconds` behind it waits no more. */
  private newest = 0;

  /**
   * `maxWaitSeconds`: how long a swap may wait for its horizon (an indexer that stopped writing
   * the mid history must not make the list grow without end); past it, it gets no markout.
   */
  constructor(
    horizon: HorizonKey,
    private readonly history: MidHistory,
    private readonly onMarkout: (entry: LedgerEntry, bps: number) => void,
    private readonly maxWaitSeconds: number,
  ) {
    this.horizon = HORIZONS.find((h) => h.key === horizon)!;
  }

  add(entry: LedgerEntry): void {
    this.newest = Math.max(this.newest, entry.blockTime);
    this.pending.push(entry);
    if (this.pending[0]!.blockTime < this.newest - this.maxWaitSeconds)
      this.pending = this.pending.filter((e) => e.blockTime >= this.newest - this.maxWaitSeconds);
  }

  /** A reorg: the orphaned blocks' swaps wait no more. */
  rollback(block: number): void {
    this.pending = this.pending.filter((e) => e.blockNumber <= block);
  }

  get size(): number {
    return this.pending.length;
  }

  /**
   * Gives every swap whose horizon the history has reached its markout (single flight: a call
   * during a run runs once more after it). Rejects when the history cannot be read; the swaps
   * then wait for the next call.
   */
  settle(): Promise<void> {
    if (this.settling) {
      this.again = true;
      return this.settling;
    }
    this.settling = this.run().finally(() => {
      this.settling = undefined;
      if (this.again) {
        this.again = false;
        void this.settle().catch(() => undefined);
      }
    });
    return this.settling;
  }

  private async run(): Promise<void> {
    if (this.pending.length === 0) return;
    const latest = await this.history.latest();
    if (!latest) return;
    const due = this.pending.filter((e) => targetReached(latest, markoutTarget(e, this.horizon)));
    if (due.length === 0) return;
    // Swaps of one block share their target: one read each.
    const records = new Map<string, Promise<MidRecord | undefined>>();
    const resolved: { entry: LedgerEntry; record: MidRecord | undefined }[] = [];
    for (const entry of due) {
      const target = markoutTarget(entry, this.horizon);
      const key = JSON.stringify(target);
      if (!records.has(key)) records.set(key, this.history.atOrBefore(target));
      resolved.push({ entry, record: await records.get(key)! });
    }
    // A reorg while reading took its orphans out of `pending`: they get no markout.
    const still = new Set(this.pending);
    const settled = new Set(due);
    this.pending = this.pending.filter((e) => !settled.has(e));
    for (const { entry, record } of resolved) {
      if (!still.has(entry)) continue;
      const mid = record ? midOf(record, entry.base) : undefined;
      if (mid !== undefined) this.onMarkout(entry, markoutBps(entry, mid));
    }
  }
}
