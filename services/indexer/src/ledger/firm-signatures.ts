/**
 * The firm signatures behind the unused-share limit (limit-window.ts): the chain's audit trail read
 * as it grows, each firm signature (a /v2 sign with `amountIn`) held until its window has passed in
 * the ledger's time (the committed block's time past its deadline), then judged as `npm run fills`
 * judges a fate at that moment (core's signature-fates.ts): used when a swap or a reverted call of
 * the ledger was attributed to its request, else unused.
 *
 * - A reverted call mined after the deadline (`QuoteExpired`) turns a signature's fate from unused
 *   to reverted in `fills`; the limit has counted it unused by then and does not go back.
 * - A reorg: the calls of the orphaned blocks are forgotten, and the signatures judged in them are
 *   judged again at the next block.
 * - Only signatures the ledger can have seen the calls of: a ledger started for the first time
 *   judges those signed (less the fates' minute of slack before the signed timestamp) after its
 *   first block; a resumed one, every one of the window (it has followed the chain without a gap,
 *   except that in the first window of its life it may judge unused one used before it began).
 */
import {
  FATE_CALLS,
  auditEntryOf,
  type AuditRecord,
  type LedgerEntry,
  type LedgerRevert,
  type RedisClient,
} from '@pmm/core';

/** A firm signature once judged. */
export interface FirmFate {
  integratorId: string;
  requestId: string;
  unused: boolean;
  /** The block it was judged at, and its deadline (the limit's window is by deadline). */
  blockNumber: number;
  deadline: number;
}

type StreamPage = [id: string, fields: string[]][];
type Call = Pick<LedgerEntry, 'requestId' | 'blockNumber' | 'blockTime'>;

const PAGE = 1_000;

export class FirmSignatures {
  /** The last stream entry read. */
  private cursor: string | undefined;
  /** Firm signatures read whose window has not passed yet, in stream order. */
  private pending: AuditRecord[] = [];
  /** Request id → the blocks and time of the calls attributed to it. */
  private readonly calls = new Map<string, { blocks: number[]; time: number }>();
  /** Signatures judged, with the block they were judged at (a reorg may undo it). */
  private judged: { record: AuditRecord; block: number }[] = [];
  private coveredFrom = Infinity;

  constructor(
    private readonly redis: RedisClient,
    private readonly audit: string,
    /** Seconds of calls and judgements kept: the limit's window and the fates' call window. */
    private readonly keepSeconds: number,
  ) {}

  /**
   * Before the first {@link judge}: the trail is read from `fromMs` (stream id time), the calls
   * already in the ledger are given, and the ledger's calls are known from `coveredFrom` (Unix s).
   */
  start(fromMs: number, coveredFrom: number, calls: readonly Call[]): void {
    this.cursor = `${Math.max(0, Math.floor(fromMs))}-0`;
    this.coveredFrom = coveredFrom;
    this.add(calls);
  }

  /** A committed block's attributed calls (swaps and reverted calls). */
  add(calls: readonly (Call | LedgerRevert)[]): void {
    for (const c of calls) {
      if (!c.requestId) continue;
      const held = this.calls.get(c.requestId);
      if (held) {
        held.blocks.push(c.blockNumber);
        held.time = Math.max(held.time, c.blockTime);
      } else this.calls.set(c.requestId, { blocks: [c.blockNumber], time: c.blockTime });
    }
  }

  /** A reorg: what blocks above `to` held is forgotten; the signatures judged in them wait again. */
  rollback(to: number): void {
    for (const [requestId, held] of this.calls) {
      held.blocks = held.blocks.filter((b) => b <= to);
      if (held.blocks.length === 0) this.calls.delete(requestId);
    }
    const undone = this.judged.filter((j) => j.block > to).map((j) => j.record);
    this.judged = this.judged.filter((j) => j.block <= to);
    this.pending = [...undone, ...this.pending];
  }

  /**
   * The firm signatures whose window has passed at block `block` of time `blockTime` (Unix s),
   * judged; reads what the trail gained since the last call first.
   */
  async judge(block: number, blockTime: number): Promise<FirmFate[]> {
    await this.read();
    const out: FirmFate[] = [];
    const waiting: AuditRecord[] = [];
    for (const r of this.pending) {
      if (r.deadline! >= blockTime) {
        waiting.push(r);
        continue;
      }
      this.judged.push({ record: r, block });
      out.push({
        integratorId: r.integratorId,
        requestId: r.requestId,
        unused: !this.calls.has(r.requestId),
        blockNumber: block,
        deadline: r.deadline!,
      });
    }
    this.pending = waiting;
    this.forget(blockTime - this.keepSeconds);
    return out;
  }

  private async read(): Promise<void> {
    if (this.cursor === undefined) throw new Error('firm signatures: not started');
    for (;;) {
      const page = (await this.redis.xrange(this.audit, `(${this.cursor}`, '+', 'COUNT', PAGE)) as StreamPage;
      for (const [id, fields] of page) {
        const { record } = auditEntryOf(id, fields);
        // Firm, dated and attributable; signed once the ledger saw the chain.
        if (record.amountOut === undefined || record.deadline === undefined || !record.integratorId) continue;
        if (record.timestamp - FATE_CALLS.beforeSeconds < this.coveredFrom) continue;
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
