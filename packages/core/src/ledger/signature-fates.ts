/**
 * Each signature's fate once its window has passed, from the audit trail (who asked, when, for
 * what) and the ledger (what executed, what reverted), and the figures aggregators rank a maker
 * on, per integrator, chain and pair. The operator's `fills` and the gateway's integrator view
 * (`GET /v2/fills`) both read them through {@link chainFates}, so both count the same way; the
 * rest of this file is pure.
 *
 * A signature covers the user, the pair, the fee and the second, not the amounts: requests of the
 * same user and pair in the same second get the same signature, even from two integrators. So a
 * call is joined to the request the ledger attributed it to (its `requestId`: attribute-swap.ts
 * prefers the record that asked for the call's amounts), not to every record of its signature.
 *
 * - **executed**: a swap of the ledger was attributed to the request (the first one, by block, names the
 *   block, the delay from signing in seconds and, for a firm quote, in blocks from the quote's
 *   block, and executed against quoted);
 * - **reverted**: no swap, but a reverted router call was attributed to it (the last one's reason):
 *   a call sent after the window (`QuoteExpired`, up to {@link FATE_CALLS}' ten minutes after it)
 *   turns unused into reverted;
 * - **unused**: neither, and its window has passed in the ledger's time (the block time of the
 *   ledger's cursor is past its deadline: no later block can execute it);
 * - **pending**: the window has not passed in the ledger's time yet, or the record has no
 *   deadline (written before records had one): counted apart, never as unused.
 *
 * Counted per audit record (one request).
 */
import type { FillFate, FillFateKind } from '@pmm/protocol';
import type { AuditRecord } from '../audit/audit-record';
import type { LedgerCursor } from './ledger-cursor';
import type { LedgerEntry } from './ledger-entry';
import type { LedgerRevert } from './ledger-revert';
import { quoteGapBps } from './quote-gap';

export type FateKind = FillFateKind;

/** A signature's fate (the wire's, `GET /v2/fills`), with the integrator it was given to. */
export interface SignatureFate extends FillFate {
  integratorId: string;
}

/**
 * Which router calls can be a signature's: those mined from a minute before its signed timestamp
 * (the router takes a quote up to 30 s from the future) to ten minutes after its deadline. A swap
 * cannot execute after the deadline; a call sent later still reverts (`QuoteExpired`) and counts,
 * within these ten minutes. One rule for every reader, so that a fate never depends on the period
 * or the page it was read in.
 */
export const FATE_CALLS = { beforeSeconds: 60, afterDeadlineSeconds: 600 } as const;

/** The block times (Unix s, [from, to)) of the calls that can be `record`'s. */
function callWindow(r: AuditRecord): { from: number; to: number } {
  return {
    from: r.timestamp - FATE_CALLS.beforeSeconds,
    to: (r.deadline ?? r.timestamp) + FATE_CALLS.afterDeadlineSeconds + 1,
  };
}

/** The block times (Unix s, [from, to)) of the ledger records that can be the fates of `records` (none: undefined). */
export function fateCallPeriod(records: readonly AuditRecord[]): { from: number; to: number } | undefined {
  let period: { from: number; to: number } | undefined;
  for (const r of records) {
    const w = callWindow(r);
    period = period ? { from: Math.min(period.from, w.from), to: Math.max(period.to, w.to) } : w;
  }
  return period;
}

export interface FateInputs {
  records: readonly AuditRecord[];
  /** The ledger's swaps and reverted calls of the chains and the period (and after: up to the deadlines). */
  entries: readonly LedgerEntry[];
  reverts: readonly LedgerRevert[];
  /** Per chain, the block time of the ledger's cursor (undefined: no fate is final yet). */
  ledgerTime(chainId: number): number | undefined;
}

const byBlock = <T extends { blockNumber: number }>(a: T, b: T) => a.blockNumber - b.blockNumber;

/**
 * Symbols by `<chainId>:<token address>` from what the ledger names: its swaps' pairs (base and
 * quote addresses beside them), and its reverted calls' pairs whose quote side is known.
 */
function symbolsOf(entries: readonly LedgerEntry[], reverts: readonly LedgerRevert[]): Map<string, string> {
  const symbols = new Map<string, string>();
  const quotes = new Set<string>();
  for (const e of entries) {
    const [base, quote] = e.pair.split('/');
    if (base) symbols.set(`${e.chainId}:${e.base}`, base);
    if (quote) symbols.set(`${e.chainId}:${e.quote}`, quote);
    quotes.add(`${e.chainId}:${e.quote}`);
  }
  for (const r of reverts) {
    const [base] = r.pair.split('/');
    if (!base) continue;
    if (quotes.has(`${r.chainId}:${r.tokenIn}`)) symbols.set(`${r.chainId}:${r.tokenOut}`, base);
    else if (quotes.has(`${r.chainId}:${r.tokenOut}`)) symbols.set(`${r.chainId}:${r.tokenIn}`, base);
  }
  return symbols;
}

export function signatureFates(inputs: FateInputs): SignatureFate[] {
  const byRequest = <T extends { chainId: number; requestId: string }>(list: readonly T[]) => {
    const map = new Map<string, T[]>();
    for (const x of list) {
      if (!x.requestId) continue; // not attributed: no request to join
      const key = `${x.chainId}:${x.requestId}`;
      map.set(key, [...(map.get(key) ?? []), x]);
    }
    return map;
  };
  const swapsBy = byRequest(inputs.entries);
  const revertsBy = byRequest(inputs.reverts);
  const symbols = symbolsOf(inputs.entries, inputs.reverts);
  const quoteTokens = new Set(inputs.entries.map((e) => `${e.chainId}:${e.quote}`));
  const pairOf = (r: AuditRecord) => {
    const quoteIn = quoteTokens.has(`${r.chainId}:${r.tokenIn}`);
    const [base, quote] = quoteIn ? [r.tokenOut, r.tokenIn] : [r.tokenIn, r.tokenOut];
    const name = (a: string) => symbols.get(`${r.chainId}:${a}`);
    return name(base) && name(quote) ? `${name(base)}/${name(quote)}` : `${r.tokenIn}/${r.tokenOut}`;
  };

  return inputs.records.map((r) => {
    const window = callWindow(r);
    const within = (c: { blockTime: number }) => c.blockTime >= window.from && c.blockTime < window.to;
    const swaps = (swapsBy.get(`${r.chainId}:${r.requestId}`) ?? []).filter(within).sort(byBlock);
    const reverted = (revertsBy.get(`${r.chainId}:${r.requestId}`) ?? []).filter(within).sort(byBlock);
    const ledgerTime = inputs.ledgerTime(r.chainId);
    const final = r.deadline !== undefined && ledgerTime !== undefined && ledgerTime > r.deadline;
    const fate: SignatureFate = {
      chainId: r.chainId,
      integratorId: r.integratorId,
      keyId: r.keyId,
      requestId: r.requestId,
      ...(r.clientRequestId !== undefined ? { clientRequestId: r.clientRequestId } : {}),
      signature: r.signature.toLowerCase(),
      signedAt: r.time,
      quoteTimestamp: r.timestamp,
      ...(r.deadline !== undefined ? { deadline: r.deadline } : {}),
      firm: r.amountOut !== undefined,
      pair: swaps[0]?.pair ?? (reverted[0]?.pair || pairOf(r)),
      fate: !final ? 'pending' : swaps.length > 0 ? 'executed' : reverted.length > 0 ? 'reverted' : 'unused',
      executions: swaps.length,
      reverts: reverted.length,
    };
    if (fate.fate === 'executed') {
      const first = swaps[0]!;
      Object.assign(fate, {
        txHash: first.txHash,
        blockNumber: first.blockNumber,
        blockTime: first.blockTime,
        delaySeconds: first.blockTime - r.timestamp,
        ...(r.blockNumber !== undefined ? { delayBlocks: first.blockNumber - r.blockNumber } : {}),
        amountOut: first.amountOut,
      });
      if (first.quotedAmountOut !== undefined) {
        fate.quotedAmountOut = first.quotedAmountOut;
        const gap = quoteGapBps(BigInt(first.quotedAmountOut), BigInt(first.amountOut));
        if (gap !== undefined) fate.executedVsQuotedBps = gap;
      }
    } else if (fate.fate === 'reverted') {
      const last = reverted[reverted.length - 1]!;
      Object.assign(fate, {
        txHash: last.txHash,
        blockNumber: last.blockNumber,
        blockTime: last.blockTime,
        reason: last.reason,
      });
    }
    return fate;
  });
}

/** What {@link chainFates} reads of a chain's ledger (core's LedgerReads; a test's own). */
export interface FateLedger {
  entries(chainId: number, fromSeconds: number, toSeconds: number): Promise<LedgerEntry[]>;
  reverts(chainId: number, fromSeconds: number, toSeconds: number): Promise<LedgerRevert[]>;
  cursor(chainId: number): Promise<LedgerCursor | undefined>;
}

/**
 * The fates of one chain's `records`, read from that chain's ledger: its cursor (how far the
 * ledger's time is) first, then the swaps and reverted calls that can be theirs (their
 * {@link fateCallPeriod}). What `npm run fills` does per chain and `GET /v2/fills` per page.
 */
export async function chainFates(
  ledger: FateLedger,
  chainId: number,
  records: readonly AuditRecord[],
): Promise<{ fates: SignatureFate[]; cursor: LedgerCursor | undefined }> {
  // The cursor before the calls: a block committed in between is read, never judged unread.
  const cursor = await ledger.cursor(chainId);
  const period = fateCallPeriod(records);
  const [entries, reverts] = period
    ? await Promise.all([
        ledger.entries(chainId, period.from, period.to),
        ledger.reverts(chainId, period.from, period.to),
      ])
    : [[], []];
  const fates = signatureFates({ records, entries, reverts, ledgerTime: () => cursor?.time });
  return { fates, cursor };
}
