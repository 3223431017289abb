/**
 * The maker's ledger's record: one per executed swap of the router (written by the ledger process,
 * services/indexer/src/ledger; read by the operator's `markouts`). Stored as JSON members of a
 * sorted set scored by block number; this file is the one place that maps a record to it and back.
 */
import { checkLedgerCall, type LedgerCall } from './ledger-call';

export interface LedgerEntry extends LedgerCall {
  /** '' when not attributed (then `reason` says why). */
  integratorId: string;
  keyId: string;
  requestId: string;
  reason?: string;
  /** Lowercase addresses: the pair's base token and the chain's quote token. */
  base: string;
  quote: string;
  /** `WETH/USDC`. */
  pair: string;
  /** From the maker's side: `bid` when the maker bought the base token, `ask` when it sold it. */
  side: 'bid' | 'ask';
  /** Human decimal strings: base and quote moved by the swap (the quote after the fee). */
  baseAmount: string;
  quoteAmount: string;
  /** Quote per base, decimal string (18 decimals at most). */
  executionPrice: string;
  /** What the router paid out, raw units of tokenOut. */
  amountOut: string;
  /** The firm quote's amountOut (raw), when the audit record has one. */
  quotedAmountOut?: string;
}

export function ledgerEntryJson(e: LedgerEntry): string {
  return JSON.stringify(e);
}

/** Reads a stored entry back; throws naming what is wrong. */
export function parseLedgerEntry(json: string): LedgerEntry {
  const v: unknown = JSON.parse(json);
  checkLedgerCall<LedgerEntry>('ledger entry', v, {
    integers: [],
    strings: ['integratorId', 'base', 'pair', 'executionPrice', 'baseAmount'],
  });
  if (v.side !== 'bid' && v.side !== 'ask') throw new Error('ledger entry: side is neither bid nor ask');
  return v as LedgerEntry;
}
