/**
 * The audit record of a signed quote: who asked (integrator, API key id, request id), what was
 * asked and what was signed. Built from the parsed request and the signing result only.
 */
import type { AuditRecord } from '@pmm/core';
import type { ParsedSignRequest } from '@pmm/protocol';
import type { SignedQuote } from './sign-quote';

export interface Requester {
  integratorId: string;
  /** The API key's public id; '' when unknown. */
  keyId: string;
  /** The service's own id of the request, and the client's when it sent one. */
  requestId: string;
  clientRequestId?: string;
  /** Unix ms at signing. */
  nowMs: number;
}

export function signatureRecord(req: ParsedSignRequest, signed: SignedQuote, who: Requester): AuditRecord {
  const record: AuditRecord = {
    time: who.nowMs,
    chainId: signed.chainId,
    integratorId: who.integratorId,
    keyId: who.keyId,
    requestId: who.requestId,
    userAddress: req.userAddress.toLowerCase(),
    tokenIn: req.tokenIn.toLowerCase(),
    tokenOut: req.tokenOut.toLowerCase(),
    fee: req.fee.toString(),
    originRate: signed.originRate.toString(),
    timestamp: signed.response.timestamp,
    deadline: signed.deadline,
    digest: signed.digest,
    signature: signed.signature,
    signer: signed.signerAddress,
  };
  if (who.clientRequestId !== undefined) record.clientRequestId = who.clientRequestId;
  if (req.amountIn !== undefined) {
    record.amountIn = req.amountIn.toString();
    // The minimum the calldata encodes (derived from the firm amount with slippageBps).
    record.minAmountOut = (signed.minAmountOut ?? req.minAmountOut).toString();
  }
  if (signed.firm) {
    record.amountOut = signed.firm.amountOut.toString();
    record.blockNumber = signed.firm.blockNumber;
  }
  return record;
}
