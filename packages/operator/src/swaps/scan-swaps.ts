/**
 * Finds every call of the router's `swap` in a block range, top-level or nested at any depth, any
 * number per transaction, from on-chain facts only (any router that implements the
 * specification's `swap` and moves standard ERC-20 tokens, not only the reference one):
 *
 * 1. standard ERC-20 `Transfer` logs to and from the router (`eth_getLogs`, at most `span`
 *    blocks per request; a node that refuses a range gets half of it, down to one block, and
 *    later ranges keep the size it accepted). Every swap moves tokenIn to the router and tokenOut
 *    from it in its transaction, so only transactions with both are candidates: reserve top-ups
 *    and withdrawals (one direction) cost nothing more. A reverted transaction has no logs.
 * 2. each candidate is read (`eth_getTransactionByHash`): a top-level call of the router's `swap`
 *    is one swap, its figures from its calldata (tokens, amountIn, signature) and its logs
 *    (amountOut: tokenOut sent by the router; the transaction holds no other swap).
 * 3. any other candidate (an executor, an aggregator, a split route) is traced (call-trace.ts):
 *    each successful call of the router's `swap` is a swap, with its own calldata and its own
 *    return data (amountOut). Reverted calls, or calls under a reverted caller, are not swaps.
 *    When the node cannot trace, the transaction is listed apart with the reason.
 *
 * Transactions are read and traced `concurrency` at a time (ethers sends requests made together
 * as one JSON-RPC batch); each request is retried when the failure looks transient. A trace that
 * still failed (the node overloaded or restarting for longer than the reader's two seconds of
 * retries, or an answer the reader takes as final that a node behind a balancer may not give
 * again, e.g. "header not found" from a lagging one) is tried again after the window, in rounds
 * spaced by `retryDelaysMs`: a transaction is listed apart only when its trace failed through
 * every round, or when the failure cannot change (no tracer, an impossible or oversized answer).
 * settle-command.ts then marks the report incomplete: a failure never passes for "no swap".
 */
import { SWAP_SELECTOR } from '@pmm/protocol';
import {
  ImpossibleTrace,
  NO_TRACER_REASON,
  TracerChoice,
  TracerUnsupported,
  type RouterSwapCall,
} from '../chain/call-trace';
import {
  AnswerTooLarge,
  rpcError,
  type ChainReader,
  type ChainTransaction,
  type TransferLog,
} from '../chain/chain-reader';
import { revertOf, signedCallOf, type OnChainRevert, type SignedCall } from './router-call';

export interface OnChainSwap extends SignedCall {
  txHash: string;
  blockNumber: number;
  /** Unix seconds of the block. */
  blockTime: number;
  /** Index of the first router Transfer log of the transaction (orders transactions within a block). */
  logIndex: number;
  /** Order of the swap among the transaction's swaps (0 for the first). */
  callIndex: number;
  /** `direct`: the transaction calls the router's swap itself; `nested`: a contract does (found by tracing). */
  via: 'direct' | 'nested';
  /** Lowercase: msg.sender of the router call (the router requires it to be the signed userAddress). */
  user: string;
  /** Lowercase: who sent the transaction. */
  txFrom: string;
  /** What the router paid out for this call: its return data, or for a direct call the router's tokenOut transfers. */
  amountOut: bigint;
}

/** A transaction that touched the router like a swap but could not be examined. */
export interface UnexaminedTransaction {
  chainId: number;
  txHash: string;
  blockNumber: number;
  blockTime: number;
  logIndex: number;
  reason: string;
}

export interface ScanResult {
  swaps: OnChainSwap[];
  /** Router calls that reverted inside transactions that succeeded (an executor caught them). */
  reverts: OnChainRevert[];
  unexamined: UnexaminedTransaction[];
  /** Transactions read, and of those traced. */
  transactions: number;
  traced: number;
}

export interface ScanOptions {
  reader: ChainReader;
  router: string;
  fromBlock: number;
  toBlock: number;
  /** Most blocks per eth_getLogs request; default 2000. */
  span?: number;
  /** Transactions read or traced at once; default 8. */
  concurrency?: number;
  /** Shared across a run so that the node's tracer is found once per chain. */
  tracer: TracerChoice;
  /** Waits before each new round of traces that failed; default RETRY_DELAYS_MS. */
  retryDelaysMs?: readonly number[];
  /** Called after each block window with the last block done. */
  onProgress?: (doneThrough: number, swapsSoFar: number, unexaminedSoFar: number) => void;
}

/**
 * The waits before each new round of attempts at the transactions whose trace failed, after the
 * reader's own retries (under two seconds): about half a minute in all, for a node that was
 * overloaded or restarting, before a transaction is listed apart and the report is incomplete.
 */
const RETRY_DELAYS_MS: readonly number[] = [2_000, 5_000, 10_000, 15_000];

async function logsIn(
  reader: ChainReader,
  router: string,
  from: number,
  to: number,
): Promise<{ logs: TransferLog[]; to: number }> {
  try {
    const [incoming, outgoing] = await Promise.all([
      reader.transfers(router, 'to', from, to),
      reader.transfers(router, 'from', from, to),
    ]);
    return { logs: [...incoming, ...outgoing], to };
  } catch (err) {
    if (to === from) throw err;
    // Too many results or too wide a range for this node: try the first half.
    return logsIn(reader, router, from, from + Math.floor((to - from) / 2));
  }
}

/** Runs `work` over `items`, at most `limit` at a time, results in the items' order. */
export async function pool<T, R>(items: readonly T[], limit: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const lane = async () => {
    while (next < items.length) {
      const i = next++;
      results[i] = await work(items[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
  return results;
}

/**
 * The router's swap calls of a transaction: its own call when it calls the router's swap, else
 * the calls its trace shows. `unexamined` says why there is no answer.
 */
export async function routerSwapCalls(
  reader: ChainReader,
  tracer: TracerChoice,
  router: string,
  tx: ChainTransaction,
): Promise<{ via: 'direct' | 'nested'; calls: RouterSwapCall[] } | { unexamined: string; mayPass: boolean }> {
  if (tx.to === router && tx.input.startsWith(SWAP_SELECTOR))
    return { via: 'direct', calls: [{ from: tx.from, input: tx.input, output: '0x', depth: 0, reverted: false }] };
  const traced = await tracedSwapCalls(reader, tracer, router, tx);
  return 'calls' in traced ? { via: 'nested', calls: traced.calls } : traced;
}

/** The router's swap calls of a transaction as the node's tracer shows them; `unexamined` says why there is no answer. */
export async function tracedSwapCalls(
  reader: ChainReader,
  tracer: TracerChoice,
  router: string,
  tx: ChainTransaction,
): Promise<{ calls: RouterSwapCall[] } | { unexamined: string; mayPass: boolean }> {
  try {
    const calls = await tracer.swapCalls(reader, tx, router);
    if (calls) return { calls };
    return { unexamined: NO_TRACER_REASON, mayPass: false };
  } catch (err) {
    // The same answer would come again: the node lacks the tracer for it, or answered what no EVM
    // produces or more than the reader reads. Anything else (no answer, a node-side timeout, a
    // rate limit, pruned state that an archive node behind a balancer may have) may pass later.
    const same = err instanceof TracerUnsupported || err instanceof ImpossibleTrace || err instanceof AnswerTooLarge;
    return { unexamined: `the node could not trace it: ${rpcError(err).message}`, mayPass: !same };
  }
}

export async function scanSwaps(opts: ScanOptions): Promise<ScanResult> {
  const { reader } = opts;
  const router = opts.router.toLowerCase();
  const span = opts.span ?? 2_000;
  const result: ScanResult = { swaps: [], reverts: [], unexamined: [], transactions: 0, traced: 0 };
  let from = opts.fromBlock;
  // Once the node refused a window, later windows keep the size it accepted.
  let size = span;
  while (from <= opts.toBlock) {
    const window = await logsIn(reader, router, from, Math.min(opts.toBlock, from + size - 1));
    if (window.to < Math.min(opts.toBlock, from + size - 1)) size = window.to - from + 1;
    const byTx = new Map<string, TransferLog[]>();
    for (const log of window.logs) {
      const list = byTx.get(log.txHash) ?? [];
      list.push(log);
      byTx.set(log.txHash, list);
    }
    // A swap moves tokenIn to the router and tokenOut from it: one direction alone is a top-up or a withdrawal.
    const candidates = [...byTx].filter(
      ([, logs]) => logs.some((l) => l.to === router) && logs.some((l) => l.from === router),
    );
    const concurrency = opts.concurrency ?? 8;
    const found = await pool(candidates, concurrency, ([hash, logs]) =>
      examine(reader, opts.tracer, router, hash, logs),
    );
    for (const delay of opts.retryDelaysMs ?? RETRY_DELAYS_MS) {
      const again = found.flatMap((f, i) => (f.unexamined && f.mayPass ? [i] : []));
      if (again.length === 0) break;
      await new Promise((r) => setTimeout(r, delay));
      const retried = await pool(again, concurrency, (i) =>
        examine(reader, opts.tracer, router, candidates[i]![0], candidates[i]![1]),
      );
      again.forEach((i, k) => (found[i] = retried[k]!));
    }
    for (const f of found) {
      result.transactions += 1;
      if (f.traced) result.traced += 1;
      result.swaps.push(...f.swaps);
      result.reverts.push(...f.reverts);
      if (f.unexamined) result.unexamined.push(f.unexamined);
    }
    opts.onProgress?.(window.to, result.swaps.length, result.unexamined.length);
    from = window.to + 1;
  }
  const order = (a: { blockNumber: number; logIndex: number }, b: { blockNumber: number; logIndex: number }) =>
    a.blockNumber - b.blockNumber || a.logIndex - b.logIndex;
  result.swaps.sort((a, b) => order(a, b) || a.callIndex - b.callIndex);
  result.unexamined.sort(order);
  return result;
}

async function examine(
  reader: ChainReader,
  tracer: TracerChoice,
  router: string,
  hash: string,
  logs: TransferLog[],
): Promise<{
  swaps: OnChainSwap[];
  reverts: OnChainRevert[];
  unexamined?: UnexaminedTransaction;
  mayPass?: boolean;
  traced: boolean;
}> {
  const first = logs.reduce((a, b) => (a.logIndex <= b.logIndex ? a : b));
  const [tx, blockTime] = await Promise.all([reader.transaction(hash), reader.blockTime(first.blockNumber)]);
  if (!tx) throw new Error(`chain ${reader.chainId}: transaction ${hash} of a log not found`);
  const found = await routerSwapCalls(reader, tracer, router, tx);
  const place = {
    chainId: reader.chainId,
    txHash: hash,
    blockNumber: first.blockNumber,
    blockTime,
    logIndex: first.logIndex,
  };
  if ('unexamined' in found)
    return {
      swaps: [],
      reverts: [],
      unexamined: { ...place, reason: found.unexamined },
      mayPass: found.mayPass,
      traced: false,
    };
  const swaps: OnChainSwap[] = [];
  const reverts: OnChainRevert[] = [];
  for (const [index, call] of found.calls.entries()) {
    const signed = signedCallOf(reader.chainId, call.input);
    if (!signed) continue; // the selector with truncated arguments: the router rejected it, nothing moved
    if (call.reverted) {
      // A router call an executor caught (an optional leg): the transaction went on without it.
      reverts.push(revertOf(signed, call, { ...place, callIndex: index, via: found.via, txFrom: tx.from }, false));
      continue;
    }
    const swap: OnChainSwap = {
      ...place,
      ...signed,
      callIndex: swaps.length,
      via: found.via,
      user: call.from,
      txFrom: tx.from,
      amountOut:
        found.via === 'direct'
          ? logs.filter((l) => l.token === signed.tokenOut && l.from === router).reduce((t, l) => t + l.value, 0n)
          : call.output.length >= 66
            ? BigInt(call.output.slice(0, 66))
            : 0n,
    };
    if (found.via === 'nested' && call.output.length < 66) swap.problem = 'the router call returned no amountOut';
    swaps.push(swap);
  }
  return { swaps, reverts, traced: found.via === 'nested' };
}
