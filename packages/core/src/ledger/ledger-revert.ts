/**
 * The maker's ledger's record of a router `swap` call that reverted (written by the ledger process
 * beside the block's swaps, services/indexer/src/ledger; read by the operator's commands). Stored
 * as JSON members of a sorted set scored by block number; this file is the one place that maps a
 * record to it and back.
 */
import { checkLedgerCall, type LedgerCall } from './ledger-call';

export interface LedgerRevert extends LedgerCall {
  /** True when the whole transaction reverted; false when a contract caught the call's revert and went on. */
  txReverted: boolean;
  /**
   * The router's error (`QuoteExpired`, `InsufficientOutput`, `InsufficientReserve`,
   * `WrongSender`, `InvalidSignature`, …), `CallerReverted` (the router call succeeded, its caller
   * reverted after it), or `Error`, `Panic`, `Unknown`, `NoData` (docs/operations/ledger.md).
   */
  reason: string;
  /** The error's arguments, decimal strings or lowercase addresses (`Error`: `message`). */
  args: Record<string, string>;
  /** Lowercase: msg.sender of the router call, and who sent the transaction. */
  user: string;
  txFrom: string;
  /** '' when not attributed (then `unattributed` says why). */
  integratorId: string;
  keyId: string;
  requestId: string;
  unattributed?: string;
  /** The signed fields were changed after signing (the record is the signature's, the call is not what it signed). */
  altered?: true;
  /** Lowercase hex of the signature in the call's verificationData, when it decodes. */
  signature?: string;
  /** The call's quoteTimestamp (Unix seconds). */
  quoteTimestamp: number;
  /** Lowercase addresses, raw amounts. */
  tokenIn: string;
  tokenOut: string;
  amountIn: string;
  minAmountOut: string;
  /** `WETH/USDC` when one side is the chain's quote token and the other a token that answers its symbol; else ''. */
  pair: string;
}

export function ledgerRevertJson(r: LedgerRevert): string {
  return JSON.stringify(r);
}

/** Reads a stored record back; throws naming what is wrong. */
export function parseLedgerRevert(json: string): LedgerRevert {
  const v: unknown = JSON.parse(json);
  checkLedgerCall<LedgerRevert>('ledger revert', v, {
    integers: ['quoteTimestamp'],
    strings: ['reason', 'integratorId', 'tokenIn', 'tokenOut', 'pair'],
  });
  if (typeof v.args !== 'object' || v.args === null) throw new Error('ledger revert: args is not an object');
  return v as LedgerRevert;
}
