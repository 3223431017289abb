/**
 * Each signature's fate once its window has passed, from the audit trail (who asked, when, for
 * what) and the ledger (what executed, what reverted), and the figures aggregators rank a maker
 * on, per integrator, chain and pair. Pure: the operator's `fills` and the gateway's integrator
 * view read the records and call this, so both count the same way.
 *
 * A signature covers the user, the pair, the fee and the second, not the amounts: requests of the
 * same user and pair in the same second get the same signature, even from two integrators. So a
 * call is joined to the request the ledger attributed it to (its `requestId`: attribute-swap.ts
 * prefers the record that asked for the call's amounts), not to every record of its signature.
 *
 * - **executed**: a swap of the ledger was attributed to the request (the first one, by block, names the
 *   block, the delay from signing in seconds and, for a firm quote, in blocks from the quote's
 *   block, and executed against quoted);
 * - **reverted**: no swap, but a reverted router call was attributed to it (the last one's reason),
 *   whenever it came: a call sent after the window (`QuoteExpired`) turns unused into reverted;
 * - **unused**: neither, and its window has passed in the ledger's time (the block time of the
 *   ledger's cursor is past its deadline: no later block can execute it);
 * - **pending**: the window has not passed in the ledger's time yet, or the record has no
 *   deadline (written before records had one): counted apart, never as unused.
 *
 * Counted per audit record (one request).
 */
import type { AuditRecord } from '../audit/audit-record';
import type { LedgerEntry } from './ledger-entry';
import type { LedgerRevert } from './ledger-revert';
import { quoteGapBps } from './quote-gap';

export type FateKind = 'executed' | 'reverted' | 'unused' | 'pending';

export interface SignatureFate {
  chainId: number;
  integratorId: string;
  keyId: string;
  requestId: string;
  /** The integrator's own `X-Request-Id` of the sign request, when it sent one. */
  clientRequestId?: string;
  /** Lowercase hex. */
  signature: string;
  /** Unix ms of the signing, and the signed timestamp and deadline (Unix seconds). */
  signedAt: number;
  quoteTimestamp: number;
  deadline?: number;
  /** A firm quote: the record has the router's `amountOut` at a block. */
  firm: boolean;
  /** `WETH/USDC` when the ledger names the tokens; else `tokenIn/tokenOut` addresses. */
  pair: string;
  fate: FateKind;
  /** Calls that carried the signature: swaps that executed, router calls that reverted. */
  executions: number;
  reverts: number;
  /** executed: the first swap; reverted: the last reverted call. */
  txHash?: string;
  blockNumber?: number;
  blockTime?: number;
  /**
   * executed: seconds from the signed timestamp (the second of signing) to the block's time, both
   * whole seconds of the chain's kind; blocks from the firm quote's block.
   */
  delaySeconds?: number;
  delayBlocks?: number;
  /** executed: what the router paid (raw) and, for a firm quote of those very amounts, what it quoted, and the gap. */
  amountOut?: string;
  quotedAmountOut?: string;
  executedVsQuotedBps?: number;
  /** reverted: the router's error. */
  reason?: string;
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
    const swaps = [...(swapsBy.get(`${r.chainId}:${r.requestId}`) ?? [])].sort(byBlock);
    const reverted = [...(revertsBy.get(`${r.chainId}:${r.requestId}`) ?? [])].sort(byBlock);
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
