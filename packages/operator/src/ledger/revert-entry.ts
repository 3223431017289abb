/**
 * A reverted router call the scan found (scan-reverts.ts, scan-swaps.ts) and its attribution
 * (attribute-swap.ts attributeRevert) as the ledger's record (core's ledger-revert.ts). Pure.
 */
import type { LedgerRevert } from '@pmm/core';
import type { Attribution } from '../swaps/attribute-swap';
import type { OnChainRevert } from '../swaps/router-call';

/** `pair`: the pair's name (`WETH/USDC`), '' when it is not one the maker quotes or its token does not answer. */
export function ledgerRevertOf(
  revert: OnChainRevert,
  attribution: Attribution,
  pair: string,
  blockHash: string,
): LedgerRevert {
  const attributed = 'entry' in attribution ? attribution.entry.record : undefined;
  return {
    chainId: revert.chainId,
    blockNumber: revert.blockNumber,
    blockHash,
    blockTime: revert.blockTime,
    txHash: revert.txHash,
    callIndex: revert.callIndex,
    via: revert.via,
    txReverted: revert.txReverted,
    reason: revert.reason,
    args: revert.args,
    user: revert.user,
    txFrom: revert.txFrom,
    integratorId: attributed?.integratorId ?? '',
    keyId: attributed?.keyId ?? '',
    requestId: attributed?.requestId ?? '',
    ...('reason' in attribution ? { unattributed: attribution.reason } : {}),
    ...('entry' in attribution && attribution.altered ? { altered: true as const } : {}),
    ...(revert.verification ? { signature: revert.verification.signature.toLowerCase() } : {}),
    quoteTimestamp: revert.quoteTimestamp,
    tokenIn: revert.tokenIn,
    tokenOut: revert.tokenOut,
    amountIn: revert.amountIn.toString(),
    minAmountOut: revert.minAmountOut.toString(),
    pair,
  };
}
