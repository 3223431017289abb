/**
 * Runs a list of read-only calls at one block in ONE node round trip:
 * - with Multicall3: a single `eth_call` of `aggregate3` (allowFailure on every call);
 * - without: a JSON-RPC batch of `eth_call`s, all pinned to the same block (by hash).
 * Either way every call sees the same state, and a failing call fails alone.
 */
import { decodeAggregate3, encodeAggregate3, type Call, type CallResult } from './call-codec';
import { isHexBytes, revertData, type BlockHashRef, type RpcTransport } from '@pmm/core';

export interface CallBatchOptions {
  /** The block, by hash (never "latest": the book must describe one block). */
  block: BlockHashRef;
  /** Multicall3-compatible aggregator; absent → JSON-RPC batch. */
  multicall3?: string;
  timeoutMs: number;
  /** Gas for the call(s); absent: the node's default. */
  gas?: number;
  /** `calls` already encoded as `aggregate3` calldata (a plan made ahead); absent: encoded here. */
  aggregate3?: string;
}

export interface CallBatchOutcome {
  results: CallResult[];
  /** `eth_call`s sent to the node for this batch: 1 with Multicall3, else one per call. */
  ethCalls: number;
}

const gasField = (gas: number | undefined) => (gas ? { gas: '0x' + gas.toString(16) } : {});

/**
 * @throws RpcError / RpcTimeoutError / RpcConnectionError when the round trip fails as a
 *   whole (the multicall itself reverted, the node is gone, …); never a partial result.
 */
export async function executeCalls(
  rpc: RpcTransport,
  calls: readonly Call[],
  opts: CallBatchOptions,
): Promise<CallBatchOutcome> {
  if (calls.length === 0) return { results: [], ethCalls: 0 };
  if (opts.multicall3) {
    const data = opts.aggregate3 ?? encodeAggregate3(calls);
    const raw = await rpc.request(
      'eth_call',
      [{ to: opts.multicall3, data, ...gasField(opts.gas) }, opts.block],
      opts.timeoutMs,
    );
    if (!isHexBytes(raw)) throw new Error('eth_call: result is not hex');
    return { results: decodeAggregate3(raw, calls.length), ethCalls: 1 };
  }
  const outcomes = await rpc.batch(
    calls.map((c) => ({
      method: 'eth_call',
      params: [{ to: c.target, data: c.data, ...gasField(opts.gas) }, opts.block],
    })),
    opts.timeoutMs,
  );
  const results = outcomes.map((o): CallResult => {
    if (o.ok) return isHexBytes(o.result) ? { success: true, data: o.result } : { success: false, data: '0x' };
    return { success: false, data: revertData(o.error) };
  });
  return { results, ethCalls: calls.length };
}
