/**
 * The router `swap` calls that reverted in one block, sent directly or from inside a contract (an
 * aggregator's executor, a split route), each with the router's decoded error. Found without
 * tracing every transaction (docs/decisions/0072-reverted-router-calls-receipts-then-failed-traces.md):
 *
 * 1. the block's receipts, in one request (`eth_getBlockReceipts`; a node without it gets the
 *    block's transaction hashes and one `eth_getTransactionReceipt` each): a reverted
 *    transaction has status 0, and no logs, so the swap scan cannot see it;
 * 2. each failed transaction is traced (call-trace.ts, the tracer the swaps use): every router
 *    swap call in it reverted, with the router's revert data when the call itself failed, or
 *    `CallerReverted` when it succeeded and its caller failed after it.
 *
 * A router call that reverted inside a transaction that succeeded (an executor that caught it and
 * went on) is found by the swap scan (scan-swaps.ts) when the transaction also swapped; one whose
 * every router call was caught moves nothing at the router and is not found (the decision record
 * says why).
 */
import { hexToNumber, isRpcObject, numberToHex } from '@pmm/core';
import { SWAP_SELECTOR } from '@pmm/protocol';
import type { TracerChoice } from '../chain/call-trace';
import { rpcError, type ChainReader, type ChainTransaction } from '../chain/chain-reader';
import { revertOf, signedCallOf, type OnChainRevert } from './router-call';
import { pool, tracedSwapCalls } from './scan-swaps';

export interface BlockRevertScan {
  reverts: OnChainRevert[];
  /** Failed transactions that could not be examined, with why (the block must be read again). */
  unexamined: { txHash: string; reason: string }[];
  /** The block's failed transactions (each traced once). */
  failed: number;
}

export interface BlockRevertOptions {
  reader: ChainReader;
  tracer: TracerChoice;
  router: string;
  blockNumber: number;
  /** Unix seconds of the block (its header's). */
  blockTime: number;
  /** Failed transactions traced at once. */
  concurrency: number;
}

/** A failed transaction of the block: its hash and its position. */
interface Failed {
  txHash: string;
  index: number;
}

const refusesMethod = (err: unknown) => {
  const { code, message } = rpcError(err);
  return code === -32601 || /method.*(not found|not supported|does not exist|not available)/i.test(message);
};

/** The failed transactions of a block from its receipts, in block order. */
async function failedTransactions(reader: ChainReader, blockNumber: number): Promise<Failed[]> {
  let receipts: unknown;
  try {
    receipts = await reader.send('eth_getBlockReceipts', [numberToHex(blockNumber)]);
  } catch (err) {
    if (!refusesMethod(err)) throw err;
    return failedOneByOne(reader, blockNumber);
  }
  if (!Array.isArray(receipts)) throw new Error(`block ${blockNumber}: eth_getBlockReceipts answered no list`);
  const failed: Failed[] = [];
  for (const r of receipts) {
    if (!isRpcObject(r) || typeof r.transactionHash !== 'string')
      throw new Error(`block ${blockNumber}: a receipt without a transaction hash`);
    if (hexToNumber(r.blockNumber, 'receipt blockNumber') !== blockNumber)
      throw new Error(`block ${blockNumber}: a receipt of another block`);
    if (hexToNumber(r.status, 'receipt status') === 0)
      failed.push({ txHash: r.transactionHash.toLowerCase(), index: hexToNumber(r.transactionIndex, 'receipt index') });
  }
  return failed;
}

/** Without eth_getBlockReceipts: the block's transaction hashes, then each one's receipt status. */
async function failedOneByOne(reader: ChainReader, blockNumber: number): Promise<Failed[]> {
  const block = await reader.send('eth_getBlockByNumber', [numberToHex(blockNumber), false]);
  if (!isRpcObject(block) || !Array.isArray(block.transactions))
    throw new Error(`block ${blockNumber}: no such block, or one without transactions`);
  const hashes = block.transactions.filter((h): h is string => typeof h === 'string').map((h) => h.toLowerCase());
  const statuses = await Promise.all(hashes.map((h) => reader.receiptStatus(h)));
  return hashes.flatMap((txHash, index) => (statuses[index] === 0 ? [{ txHash, index }] : []));
}

/** The reverted router calls of one failed transaction, or why it could not be examined. */
async function revertsOf(
  opts: BlockRevertOptions,
  router: string,
  failed: Failed,
): Promise<OnChainRevert[] | { reason: string }> {
  const tx: ChainTransaction | undefined = await opts.reader.transaction(failed.txHash);
  if (!tx) return { reason: 'the node does not know the transaction of its receipt' };
  const traced = await tracedSwapCalls(opts.reader, opts.tracer, router, tx);
  if ('unexamined' in traced) return { reason: traced.unexamined };
  const direct = tx.to === router && tx.input.startsWith(SWAP_SELECTOR);
  // The struct logger shows the calls a transaction makes, not the transaction's own call: a
  // direct call that failed is then the transaction itself, its reason unknown.
  const calls =
    direct && traced.calls.length === 0
      ? [{ from: tx.from, input: tx.input, output: '0x', depth: 0, reverted: true, error: 'execution reverted' }]
      : traced.calls;
  const place = { txHash: failed.txHash, blockNumber: opts.blockNumber, blockTime: opts.blockTime, txFrom: tx.from };
  const out: OnChainRevert[] = [];
  for (const [callIndex, call] of calls.entries()) {
    const signed = signedCallOf(opts.reader.chainId, call.input);
    // Truncated arguments: the router rejected them before reading any signature; nothing to attribute.
    if (!signed) continue;
    out.push(revertOf(signed, call, { ...place, callIndex, via: call.depth === 0 ? 'direct' : 'nested' }, true));
  }
  return out;
}

export async function scanBlockReverts(opts: BlockRevertOptions): Promise<BlockRevertScan> {
  const router = opts.router.toLowerCase();
  const failed = await failedTransactions(opts.reader, opts.blockNumber);
  const found = await pool(failed, opts.concurrency, (f) => revertsOf(opts, router, f));
  const scan: BlockRevertScan = { reverts: [], unexamined: [], failed: failed.length };
  found.forEach((f, i) => {
    if (Array.isArray(f)) scan.reverts.push(...f);
    else scan.unexamined.push({ txHash: failed[i]!.txHash, reason: f.reason });
  });
  return scan;
}
