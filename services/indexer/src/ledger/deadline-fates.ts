/**
 * Each signature's fate judged live, at its deadline: the chain's audit trail read as it grows,
 * each dated and attributed signature held until its window has passed in the ledger's time (the
 * block being committed is past its deadline), then judged as `npm run fills` judges a fate at that
 * moment (core's signature-fates.ts): executed when a swap of the ledger was attributed to its
 * request (the delay: the first swap's block time minus the signed timestamp), else reverted when
 * a reverted call was, else unused. The ledger judges in the transaction that commits the block
 * (ledger.ts): the firm signatures' fates go to that block's day totals (core's
 * ledger-day-totals.ts), to the metrics and to the unused-share limit (limit-window.ts).
 *
 * - A reverted call mined after the deadline (`QuoteExpired`) turns a signature's fate from unused
 *   to reverted in `fills`; the live fate has been counted unused by then and does not go back.
 * - A reorg: the calls of the orphaned blocks are forgotten, and the signatures judged in them are
 *   judged again at the next block (the day totals take the undone ones back first).
 * - Only signatures the ledger can have seen the calls of: a ledger started for the first time
 *   judges those signed (the record's `time`, less {@link CLOCK_SKEW_SECONDS}) after it first
 *   committed a block (our clock): a call carries its signature, so it is mined in a block made
 *   after the signing, and every block below the ledger's first existed before that commit; a
 *   resumed one judges every one of the trail it reads. (One clock, not the chain's: a devnet's
 *   block times run apart from it.)
 * - A resumed ledger reads the trail from before its cursor (the limit's window needs those
 *   fates again); the signatures whose deadline is before its cursor's time were judged and counted
 *   by the run before: they come back marked `replayed`, for the limit only.
 *
 * Cost per block: one XRANGE of what the trail gained since the last block, and a pass over the
 * signatures whose window is open (the signs of the last validity period).
 */
import {
  auditEntryOf,
  parseLedgerCursor,
  parseLedgerEntry,
  parseLedgerRevert,
  type AuditRecord,
  type LedgerDayFate,
  type LedgerEntry,
  type LedgerRevert,
  type RedisClient,
  type RedisKeys,
} from '@pmm/core';

/** A signature once judged. */
export interface DeadlineFate extends LedgerDayFate {
  requestId: string;
  /** The block it was judged at, and its deadline (the limit's window is by deadline). */
  blockNumber: number;
  deadline: number;
  /** Executed: the first swap's block time minus the signed timestamp, seconds (fills' delaySeconds). */
  delaySeconds?: number;
  /** Judged and counted by the ledger's run before this one (for the limit's window only). */
  replayed?: boolean;
}

type StreamPage = [id: string, fields: string[]][];
type Call = Pick<LedgerEntry, 'requestId' | 'blockNumber' | 'blockTime'>;
interface Held {
  /** Blocks and times of the swaps, and blocks of the reverted calls, attributed to the request. */
  swaps: { block: number; time: number }[];
  reverts: number[];
  /** The newest call's block time (forgotten `keepSeconds` after it). */
  time: number;
}

const PAGE = 1_000;
/** How far the signer's clock may run ahead of the ledger's (both kept by NTP). */
export const CLOCK_SKEW_SECONDS = 2;

export class DeadlineFates {
  /** The last stream entry read. */
  private cursor: string | undefined;
  /** Signatures read whose window has not passed yet, in stream order. */
  private pending: AuditRecord[] = [];
  private readonly calls = new Map<string, Held>();
  /** Signatures judged, with their fate (a reorg may undo it). */
  private judged: { record: AuditRecord; fate: DeadlineFate }[] = [];
  private coveredFrom = Infinity;
  private replayedBefore = -Infinity;

  constructor(
    private readonly redis: RedisClient,
    private readonly audit: string,
    /** Seconds of calls and judgements kept: at least the longest validity and the deepest reorg. */
    private readonly keepSeconds: number,
  ) {}

  /**
   * Before the first {@link judge}: the trail is read from `fromMs` (stream id time), the calls
   * already in the ledger are given, the ledger's calls are known from `coveredFrom` (Unix s, our
   * clock: when it first committed a block; -Infinity for a resumed ledger), and
   * the signatures whose deadline is before `replayedBefore` (Unix s) were judged by the run before.
   */
  start(
    fromMs: number,
    coveredFrom: number,
    swaps: readonly Call[],
    reverts: readonly Call[],
    replayedBefore = -Infinity,
  ): void {
    this.cursor = `${Math.max(0, Math.floor(fromMs))}-0`;
    this.coveredFrom = coveredFrom;
    this.replayedBefore = replayedBefore;
    this.add(swaps, reverts);
  }

  get started(): boolean {
    return this.cursor !== undefined;
  }

  /** A committed block's attributed swaps and reverted calls. */
  add(swaps: readonly Call[], reverts: readonly (Call | LedgerRevert)[] = []): void {
    const held = (c: Call) => {
      let h = this.calls.get(c.requestId);
      if (!h) this.calls.set(c.requestId, (h = { swaps: [], reverts: [], time: c.blockTime }));
      h.time = Math.max(h.time, c.blockTime);
      return h;
    };
    for (const s of swaps) if (s.requestId) held(s).swaps.push({ block: s.blockNumber, time: s.blockTime });
    for (const r of reverts) if (r.requestId) held(r).reverts.push(r.blockNumber);
  }

  /** The fates judged at blocks above `to` (what a rollback to `to` undoes). */
  judgedAbove(to: number): DeadlineFate[] {
    return this.judged.filter((j) => j.fate.blockNumber > to).map((j) => j.fate);
  }

  /** A reorg: what blocks above `to` held is forgotten; the signatures judged in them wait again. */
  rollback(to: number): void {
    for (const [requestId, held] of this.calls) {
      held.swaps = held.swaps.filter((s) => s.block <= to);
      held.reverts = held.reverts.filter((b) => b <= to);
      if (held.swaps.length === 0 && held.reverts.length === 0) this.calls.delete(requestId);
    }
    const undone = this.judged.filter((j) => j.fate.blockNumber > to).map((j) => j.record);
    this.judged = this.judged.filter((j) => j.fate.blockNumber <= to);
    this.pending = [...undone, ...this.pending];
  }

  /**
   * The signatures whose window has passed at block `block` of time `blockTime` (Unix s), judged;
   * reads what the trail gained since the last call first.
   */
  async judge(block: number, blockTime: number): Promise<DeadlineFate[]> {
    await this.read();
    const out: DeadlineFate[] = [];
    const waiting: AuditRecord[] = [];
    for (const r of this.pending) {
      if (r.deadline! >= blockTime) {
        waiting.push(r);
        continue;
      }
      const held = this.calls.get(r.requestId);
      const first = held?.swaps.reduce<Held['swaps'][number] | undefined>(
        (a, b) => (a && a.block <= b.block ? a : b),
        undefined,
      );
      const fate: DeadlineFate = {
        integratorId: r.integratorId,
        requestId: r.requestId,
        firm: r.amountOut !== undefined,
        fate: first ? 'executed' : held && held.reverts.length > 0 ? 'reverted' : 'unused',
        blockNumber: block,
        blockTime,
        deadline: r.deadline!,
        ...(first ? { delaySeconds: first.time - r.timestamp } : {}),
        ...(r.deadline! < this.replayedBefore ? { replayed: true } : {}),
      };
      this.judged.push({ record: r, fate });
      out.push(fate);
    }
    this.pending = waiting;
    this.forget(blockTime - this.keepSeconds);
    return out;
  }

  private async read(): Promise<void> {
    if (this.cursor === undefined) throw new Error('deadline fates: not started');
    for (;;) {
      const page = (await this.redis.xrange(this.audit, `(${this.cursor}`, '+', 'COUNT', PAGE)) as StreamPage;
      for (const [id, fields] of page) {
        const { record } = auditEntryOf(id, fields);
        // Dated and attributable; signed once the ledger saw the chain.
        if (record.deadline === undefined || !record.integratorId) continue;
        if (record.time / 1_000 - CLOCK_SKEW_SECONDS < this.coveredFrom) continue;
        this.pending.push(record);
      }
      if (page.length > 0) this.cursor = page[page.length - 1]![0];
      if (page.length < PAGE) return;
    }
  }

  private forget(before: number): void {
    for (const [requestId, held] of this.calls) if (held.time < before) this.calls.delete(requestId);
    this.judged = this.judged.filter((j) => j.record.deadline! >= before);
  }
}

/**
 * Starts `fates` from the chain's ledger in Redis, before the ledger's first commit: the trail and
 * the ledger's swaps and reverted calls from `lookbackSeconds` before `nowMs`. A ledger with a
 * cursor (resumed) has seen the chain all along, and judged what its cursor's time passed; one
 * without (started for the first time) has seen it from now only (its first block existed before).
 */
export async function startFromLedger(
  fates: DeadlineFates,
  redis: RedisClient,
  keys: RedisKeys,
  chainId: number,
  lookbackSeconds: number,
  nowMs = Date.now(),
): Promise<void> {
  const raw = await redis.get(keys.ledgerCursor(chainId));
  const cursor = raw === null ? undefined : parseLedgerCursor(raw);
  const cutoff = nowMs / 1_000 - lookbackSeconds;
  const swaps = await recordsSince(redis, keys.ledger(chainId), parseLedgerEntry, cutoff);
  const reverts = await recordsSince(redis, keys.ledgerReverts(chainId), parseLedgerRevert, cutoff);
  const coveredFrom = cursor ? -Infinity : nowMs / 1_000;
  fates.start(nowMs - lookbackSeconds * 1_000, coveredFrom, swaps, reverts, cursor?.time ?? -Infinity);
}

/**
 * A sorted set's records (the ledger's swaps or reverted calls) with a block time after `cutoff`
 * (Unix s), newest first until one is older; in block order.
 */
export async function recordsSince<T extends { blockTime: number }>(
  redis: RedisClient,
  key: string,
  parse: (json: string) => T,
  cutoff: number,
): Promise<T[]> {
  const found: T[] = [];
  for (let offset = 0; ; offset += PAGE) {
    const page = await redis.zrevrangebyscore(key, '+inf', '-inf', 'LIMIT', offset, PAGE);
    const records = page.map(parse);
    found.push(...records.filter((e) => e.blockTime > cutoff));
    if (page.length < PAGE || records.some((e) => e.blockTime <= cutoff)) break;
  }
  return found.reverse();
}
