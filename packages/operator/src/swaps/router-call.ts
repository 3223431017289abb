/**
 * One call of the router's `swap`, as its calldata tells it (the signed fields and the amounts),
 * and, for a call that changed nothing, why: what scan-swaps.ts (the swaps) and scan-reverts.ts
 * (the reverted calls) both read, and what attribute-swap.ts attributes.
 */
import { decodeRouterRevert, decodeSwapCalldata, decodeVerificationData, type VerificationData } from '@pmm/protocol';
import type { RouterSwapCall } from '../chain/call-trace';

/** The fields of a router call that the signature and the audit record speak about. */
export interface SignedCall {
  chainId: number;
  tokenIn: string;
  tokenOut: string;
  /** The call's own amountIn (what the router takes). */
  amountIn: bigint;
  /** The call's `minAmountOut` (not signed: with amountIn, it tells apart requests that share a signature). */
  minAmountOut: bigint;
  /** The call's `quoteTimestamp` (the signed timestamp). */
  quoteTimestamp: number;
  /** Decoded verificationData; undefined when it is not the canonical encoding (reason in `problem`). */
  verification?: VerificationData;
  problem?: string;
}

/** A router `swap` call that reverted: the whole transaction failed, or a caller caught the failure. */
export interface OnChainRevert extends SignedCall {
  txHash: string;
  blockNumber: number;
  /** Unix seconds of the block. */
  blockTime: number;
  /** Order of the call among the transaction's router swap calls, reverted or not (0 for the first). */
  callIndex: number;
  /** `direct`: the transaction calls the router itself; `nested`: a contract does. */
  via: 'direct' | 'nested';
  /** Lowercase: msg.sender of the router call. */
  user: string;
  /** Lowercase: who sent the transaction. */
  txFrom: string;
  /**
   * The router's error (`QuoteExpired`, …: protocol's router-revert.ts), or `CallerReverted`
   * when the router call itself succeeded and something after it in the transaction reverted.
   */
  reason: string;
  /** The error's arguments (decimal strings, lowercase addresses). */
  args: Record<string, string>;
  /** True when the whole transaction reverted; false when an executor caught the call's revert and went on. */
  txReverted: boolean;
}

/** The reason of a reverted call whose own frame succeeded: its caller reverted afterwards. */
export const CALLER_REVERTED = 'CallerReverted';

/** The signed fields of a router call's calldata; undefined when the arguments are truncated (the router rejected it). */
export function signedCallOf(chainId: number, input: string): SignedCall | undefined {
  let args;
  try {
    args = decodeSwapCalldata(input);
  } catch {
    return undefined;
  }
  const call: SignedCall = {
    chainId,
    tokenIn: args.tokenIn,
    tokenOut: args.tokenOut,
    amountIn: args.amountIn,
    minAmountOut: args.minAmountOut,
    quoteTimestamp: Number(args.quoteTimestamp),
  };
  try {
    call.verification = decodeVerificationData(args.verificationData);
  } catch (err) {
    call.problem = `verificationData: ${err instanceof Error ? err.message : 'not decodable'}`;
  }
  return call;
}

/** A reverted call's record: its reason from its own revert data, or CallerReverted. */
export function revertOf(
  signed: SignedCall,
  call: RouterSwapCall,
  place: {
    txHash: string;
    blockNumber: number;
    blockTime: number;
    callIndex: number;
    via: 'direct' | 'nested';
    txFrom: string;
  },
  txReverted: boolean,
): OnChainRevert {
  const why = call.error !== undefined ? decodeRouterRevert(call.output) : { reason: CALLER_REVERTED, args: {} };
  return {
    ...signed,
    txHash: place.txHash,
    blockNumber: place.blockNumber,
    blockTime: place.blockTime,
    callIndex: place.callIndex,
    via: place.via,
    user: call.from,
    txFrom: place.txFrom,
    reason: why.reason,
    args: why.args,
    txReverted,
  };
}
