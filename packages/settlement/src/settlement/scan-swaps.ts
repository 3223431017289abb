/**
 * Finds the router's swaps in a block range from on-chain facts only, so that it works with any
 * router that implements the specification's `swap`, not only the reference one:
 *
 * 1. standard ERC-20 `Transfer` logs to and from the router (`eth_getLogs`, at most `span`
 *    blocks per request; a node that refuses a range gets half of it, down to one block, and later ranges keep the
 *    size it accepted);
 * 2. each transaction with such a log is read: a direct call of the router's
 *    `swap(address,uint256,address,uint256,uint256,bytes)` is a swap (decoded with core's codec);
 *    anything else (reserve top-ups, withdrawals) is not;
 * 3. the amounts are what the logs moved: `amountIn` = tokenIn sent to the router, `amountOut` =
 *    tokenOut sent by the router, in that transaction. A reverted transaction has no logs.
 *
 * Limit: a swap made through another contract (an aggregator calling the router) has no `swap`
 * calldata in its transaction and is not found; integrators call the router directly (spec 4.3).
 */
import { decodeSwapCalldata, decodeVerificationData, type VerificationData } from '@pmm/protocol';
import type { ChainReader, TransferLog } from '../chain/chain-reader';

export interface OnChainSwap {
  chainId: number;
  txHash: string;
  blockNumber: number;
  /** Unix seconds of the block. */
  blockTime: number;
  /** Index of the first router Transfer log of the transaction (orders swaps within a block). */
  logIndex: number;
  /** Lowercase: who sent the transaction. */
  sender: string;
  tokenIn: string;
  tokenOut: string;
  /** From the logs. */
  amountIn: bigint;
  amountOut: bigint;
  /** The calldata's `amountIn` and `minAmountOut` (not signed: they tell apart swaps that share a signature). */
  callAmountIn: bigint;
  callMinAmountOut: bigint;
  /** The calldata's `quoteTimestamp` (the signed timestamp). */
  quoteTimestamp: number;
  /** Decoded verificationData; undefined when it is not the canonical encoding (reason in `problem`). */
  verification?: VerificationData;
  problem?: string;
}

export interface ScanOptions {
  reader: ChainReader;
  router: string;
  fromBlock: number;
  toBlock: number;
  /** Most blocks per eth_getLogs request; default 2000. */
  span?: number;
  /** Called after each block window with the last block done. */
  onProgress?: (doneThrough: number, swapsSoFar: number) => void;
}

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

const READ_CONCURRENCY = 8;

export async function scanSwaps(opts: ScanOptions): Promise<OnChainSwap[]> {
  const { reader } = opts;
  const router = opts.router.toLowerCase();
  const span = opts.span ?? 2_000;
  const byTx = new Map<string, TransferLog[]>();
  const swaps: OnChainSwap[] = [];
  let from = opts.fromBlock;
  // Once the node refused a window, later windows keep the size it accepted.
  let size = span;
  while (from <= opts.toBlock) {
    const window = await logsIn(reader, router, from, Math.min(opts.toBlock, from + size - 1));
    if (window.to < Math.min(opts.toBlock, from + size - 1)) size = window.to - from + 1;
    const seen = new Set<string>();
    for (const log of window.logs) {
      const list = byTx.get(log.txHash) ?? [];
      list.push(log);
      byTx.set(log.txHash, list);
      seen.add(log.txHash);
    }
    // A few transactions at a time: one round trip each, and a month can hold thousands.
    const hashes = [...seen];
    for (let i = 0; i < hashes.length; i += READ_CONCURRENCY) {
      const batch = hashes.slice(i, i + READ_CONCURRENCY);
      for (const swap of await Promise.all(batch.map((h) => readSwap(reader, router, h, byTx.get(h)!))))
        if (swap) swaps.push(swap);
    }
    for (const hash of hashes) byTx.delete(hash);
    opts.onProgress?.(window.to, swaps.length);
    from = window.to + 1;
  }
  return swaps.sort((a, b) => a.blockNumber - b.blockNumber || a.logIndex - b.logIndex);
}

async function readSwap(
  reader: ChainReader,
  router: string,
  hash: string,
  logs: TransferLog[],
): Promise<OnChainSwap | undefined> {
  const tx = await reader.transaction(hash);
  if (!tx || tx.to !== router) return undefined;
  let call;
  try {
    call = decodeSwapCalldata(tx.input);
  } catch {
    return undefined; // not a swap (an admin call that moved tokens)
  }
  const first = logs.reduce((a, b) =>
    a.blockNumber < b.blockNumber || (a.blockNumber === b.blockNumber && a.logIndex <= b.logIndex) ? a : b,
  );
  const sum = (pick: (l: TransferLog) => boolean) => logs.filter(pick).reduce((t, l) => t + l.value, 0n);
  const swap: OnChainSwap = {
    chainId: reader.chainId,
    txHash: hash,
    blockNumber: first.blockNumber,
    blockTime: await reader.blockTime(first.blockNumber),
    logIndex: first.logIndex,
    sender: tx.from,
    tokenIn: call.tokenIn,
    tokenOut: call.tokenOut,
    amountIn: sum((l) => l.token === call.tokenIn && l.to === router),
    amountOut: sum((l) => l.token === call.tokenOut && l.from === router),
    callAmountIn: call.amountIn,
    callMinAmountOut: call.minAmountOut,
    quoteTimestamp: Number(call.quoteTimestamp),
  };
  try {
    swap.verification = decodeVerificationData(call.verificationData);
  } catch (err) {
    swap.problem = `verificationData: ${err instanceof Error ? err.message : 'not decodable'}`;
  }
  return swap;
}
