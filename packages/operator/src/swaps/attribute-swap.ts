/**
 * Who asked for an executed swap's signature: the one attribution the settlement and the maker's
 * ledger share. A swap is attributed only by an audit record of its signature that agrees with its
 * calldata (the fields the signature binds); among those, records that also asked for the
 * calldata's amounts come first, then those that asked for its amountIn (a caller may raise or
 * lower its minimum): the signature does not cover the amounts, so one signature can carry
 * several requests, even of several integrators (the same user, pair and second), and then the
 * amounts tell who sent it.
 */
import type { AuditEntry } from '../audit-trail/audit-reader';
import type { SignedCall } from './router-call';

/** Finds the audit records of a signature (AuditReader, or a test's own). */
export interface SignatureRecords {
  bySignature(chainId: number, signature: string, timestamp: number): Promise<AuditEntry[]>;
}

export type Attribution =
  /**
   * `entry`: the record that names the integrator and key; `requests`: records agreeing with the
   * swap; `quotedAmountOut`: the firm quote's amount (raw units), when the record has one and asked
   * for the swap's very amounts (only then is it the quote the swap executed against).
   */
  | { entry: AuditEntry; requests: number; quotedAmountOut?: string; altered?: true }
  /** Why the swap is not attributed. */
  | { reason: string };

/** Attributes one swap (its verificationData decoded: `swap.verification`). */
export async function attributeSwap(swap: SignedCall, lookup: SignatureRecords): Promise<Attribution> {
  const v = swap.verification;
  if (!v || swap.problem) return { reason: swap.problem ?? 'verificationData: not decodable' };
  const records = await lookup.bySignature(swap.chainId, v.signature, swap.quoteTimestamp);
  // The signature binds these fields; a record that disagrees was not for this swap.
  const matching = records.filter(
    (e) =>
      e.record.userAddress === v.userAddress &&
      e.record.fee === v.fee.toString() &&
      e.record.originRate === v.originRate.toString() &&
      e.record.tokenIn === swap.tokenIn &&
      e.record.tokenOut === swap.tokenOut &&
      e.record.timestamp === swap.quoteTimestamp,
  );
  const sameAmounts = matching.filter(
    (e) => e.record.amountIn === swap.amountIn.toString() && e.record.minAmountOut === swap.minAmountOut.toString(),
  );
  const sameAmountIn = matching.filter((e) => e.record.amountIn === swap.amountIn.toString());
  const candidates = sameAmounts.length > 0 ? sameAmounts : sameAmountIn.length > 0 ? sameAmountIn : matching;
  const integrators = [...new Set(candidates.map((e) => e.record.integratorId))].sort();
  if (matching.length === 0)
    return {
      reason:
        records.length === 0
          ? 'no audit record of its signature'
          : 'the audit record of its signature does not match the swap',
    };
  if (integrators.length > 1)
    return { reason: `signature recorded for several integrators: ${integrators.join(', ')}` };
  const entry = candidates[0]!;
  const quotedAmountOut = sameAmounts.length > 0 ? entry.record.amountOut : undefined;
  return { entry, requests: matching.length, ...(quotedAmountOut !== undefined ? { quotedAmountOut } : {}) };
}

/**
 * Attributes a reverted call: as a swap, and also when the call carries a signature the maker gave
 * with other signed fields (a fee, a rate, a user or tokens changed after signing: the router then
 * refuses it, `InvalidSignature`). The signature was still given to someone, who is then named,
 * with `altered`; a swap is never attributed so, since the router accepts no altered field.
 */
export async function attributeRevert(call: SignedCall, lookup: SignatureRecords): Promise<Attribution> {
  const attribution = await attributeSwap(call, lookup);
  const v = call.verification;
  if ('entry' in attribution || !v) return attribution;
  const records = await lookup.bySignature(call.chainId, v.signature, call.quoteTimestamp);
  const sameAmountIn = records.filter((e) => e.record.amountIn === call.amountIn.toString());
  const candidates = sameAmountIn.length > 0 ? sameAmountIn : records;
  const integrators = [...new Set(candidates.map((e) => e.record.integratorId))];
  if (candidates.length === 0 || integrators.length > 1) return attribution;
  return { entry: candidates[0]!, requests: records.length, altered: true };
}
