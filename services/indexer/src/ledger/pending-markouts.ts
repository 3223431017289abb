/**
 * Swaps waiting for one markout horizon to pass, and their markouts once it has, read from the
 * indexer's mid history as `npm run markouts` reads it (the operator package's ledger/markouts.ts `recordAt`): the
 * book of the last block at or before the target block or time, once the history has reached the
 * target. The history is the indexer's, so a markout waits for the indexer too, not only for the
 * chain. A swap whose book had an empty side (no mid) gets none, and so does a swap with a zero leg
 * (no price: the operator package's ledger/markouts.ts `markoutPrice`), reported at once and never waited for.
 *
 * Each swap is handled on its own: it leaves the list once it has been (its markout given, or
 * none), and a failure of one (its book unreadable, the consumer throwing) never costs another
 * its markout.
 *
 * Each markout is taken against the book's mid and against the pair's reference in the same
 * record (the history keeps both): a swap gets whichever of the two the record has.
 *
 * The ledger keeps two: the 60 s markout behind its metrics, and the markout limits' horizon.
 */
import { parseMidRecord, type LedgerEntry, type MidRecord, type RedisClient } from '@pmm/core';
import {
  HORIZONS,
  markAt,
  markoutBps,
  markoutPrice,
  markoutTarget,
  targetReached,
  type Horizon,
  type HorizonKey,
  type MarkoutBasis,
  type MarkoutTarget,
} from '@pmm/operator';

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
      const [, time] = await redis.zrevrangebyscore(keys.midTimes, target.time, '-inf', 'WITHSCORES', 'LIMIT', 0, 1);
      if (time === undefined) return undefined;
      // The members are block numbers as text, and the blocks of one second share a score, which
      // Redis orders by text ("999" after "1000"): the last record of that second is the highest
      // block by number, as operator's recordAt reads a history sorted by block.
      const blocks = await redis.zrangebyscore(keys.midTimes, time, time);
      return recordOf(Math.max(...blocks.map(Number)));
    },
  };
}

/** A swap's markout at the horizon, bps from the maker's side: against its own mid, and against the reference (each when the record has it). */
export interface SwapMarkout {
  bps?: number;
  referenceBps?: number;
}

/** Why a swap gets no markout (the ledger logs it). */
export type NoMarkoutReason = 'zero leg';

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
   * `onNoMarkout`: a swap that will never have one (a zero leg), when it is added.
   */
  constructor(
    horizon: HorizonKey,
    private readonly history: MidHistory,
    private readonly onMarkout: (entry: LedgerEntry, markout: SwapMarkout) => void,
    private readonly maxWaitSeconds: number,
    private readonly onNoMarkout: (entry: LedgerEntry, reason: NoMarkoutReason) => void = () => undefined,
  ) {
    this.horizon = HORIZONS.find((h) => h.key === horizon)!;
  }

  add(entry: LedgerEntry): void {
    if (markoutPrice(entry) === undefined) {
      this.onNoMarkout(entry, 'zero leg');
      return;
    }
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
   * during a run runs once more after it). Rejects when the history cannot be read (the swaps
   * read before get their markouts; the others wait for the next call) or when the consumer threw
   * for a swap (that one is done with; every other swap is handled all the same).
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
    let failure: { err: unknown } | undefined;
    // Swaps of one block share their target: one read each. The first read that fails ends the
    // reading (the history is likely out of reach): the swaps not read yet wait for the next call.
    const records = new Map<string, MidRecord | undefined>();
    const resolved: { entry: LedgerEntry; record: MidRecord | undefined }[] = [];
    for (const entry of due) {
      const target = markoutTarget(entry, this.horizon);
      const key = JSON.stringify(target);
      if (!records.has(key)) {
        try {
          records.set(key, await this.history.atOrBefore(target));
        } catch (err) {
          failure = { err };
          break;
        }
      }
      resolved.push({ entry, record: records.get(key) });
    }
    // From here on nothing awaits: no add() or rollback() runs between the checks and the removal.
    // A reorg while reading took its orphans out of `pending`: they get no markout.
    const still = new Set(this.pending);
    const handled = new Set<LedgerEntry>();
    for (const { entry, record } of resolved) {
      if (!still.has(entry)) continue;
      handled.add(entry);
      const against = (basis: MarkoutBasis) => {
        const price = record ? markAt(record, entry.base, basis) : undefined;
        return price === undefined ? undefined : markoutBps(entry, price);
      };
      const markout: SwapMarkout = { bps: against('mid'), referenceBps: against('reference') };
      if (markout.bps === undefined && markout.referenceBps === undefined) continue;
      try {
        this.onMarkout(entry, markout);
      } catch (err) {
        failure ??= { err };
      }
    }
    this.pending = this.pending.filter((e) => !handled.has(e));
    if (failure) throw failure.err;
  }
}
