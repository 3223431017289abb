/**
 * Computes and writes the book of one block (the BullMQ job handler).
 *
 * Idempotent and order-free: a job for a block older than this replica's newest head, or not
 * newer than the stored book, is skipped without touching the node; otherwise the whole book
 * comes from ONE round trip pinned to the block, and the write is a compare-and-set on the
 * block number (store/book-store.ts), so a re-run (stalled job) or a race between replicas
 * can never move the book backwards.
 */
import type { Logger } from '@pmm/core';
import { decodeBlockResults, planBlockCalls, type QuoteContext } from '../chain/block-quotes';
import type { BlockHead } from '../chain/block-source';
import { executeCalls } from '../chain/call-batch';
import { numberToHex, type RpcTransport } from '../chain/json-rpc';
import type { BlockOutcome, IndexerMetrics } from '../metrics';
import { outageLog } from '../outage-log';
import type { BookStore } from '../store/book-store';
import type { BlockJobData } from './block-queue';
import type { RegistryRefresher } from './registry-refresher';

export interface BlockProcessorDeps {
  ctx: QuoteContext;
  multicall3?: string;
  /** Gas of the block call (0: node default). */
  callGas: number;
  /** Node connection for the block call (not counted: the processor counts its own calls). */
  rpc: RpcTransport;
  latestHead: () => BlockHead | undefined;
  registry: RegistryRefresher;
  books: BookStore;
  timeoutMs: number;
  metrics: IndexerMetrics;
  logger: Logger;
  /** Called after each job with its outcome (tests, benchmarks). */
  onBlock?: (event: BlockEvent) => void;
}

export interface BlockEvent {
  blockNumber: number;
  outcome: BlockOutcome;
  /** For `written`: ms from the first sight of the block to the book in Redis. */
  latencyMs?: number;
  /** For computed blocks: eth_call requests sent for the block call. */
  ethCalls?: number;
  /** For computed blocks: ms from taking the job to the book written (plan, call, decode, write). */
  computeMs?: number;
  /** For computed blocks: ms of the node round trip alone (the EVM executing every quote()). */
  callMs?: number;
}

export function createBlockProcessor(deps: BlockProcessorDeps): (job: BlockJobData) => Promise<BlockOutcome> {
  const { metrics, logger: log } = deps;
  const silentFailures = outageLog(log, 'block call');
  const done = (event: BlockEvent): BlockOutcome => {
    metrics.blocks.inc({ outcome: event.outcome });
    deps.onBlock?.(event);
    return event.outcome;
  };

  return async (job) => {
    const head = deps.latestHead();
    if (head && job.number < head.number) return done({ blockNumber: job.number, outcome: 'superseded' });
    const stored = await deps.books.storedBlock();
    if (stored !== null && stored >= job.number) return done({ blockNumber: job.number, outcome: 'already_stored' });

    const started = Date.now();
    try {
      const tracked = await deps.registry.ensure();
      const calls = await planBlockCalls(tracked, deps.ctx, BigInt(job.timestamp) * 1000n);
      metrics.quoteCallsPerBlock.set(calls.length - 1); // every call but getReserveBalances
      let batch;
      const callStarted = Date.now();
      try {
        batch = await executeCalls(deps.rpc, calls, {
          blockTag: numberToHex(job.number),
          multicall3: deps.multicall3,
          timeoutMs: deps.timeoutMs,
          gas: deps.callGas || undefined,
        });
      } catch (err) {
        metrics.rpcErrors.inc({ purpose: 'block' });
        throw err;
      }
      const callMs = Date.now() - callStarted;
      metrics.ethCalls.inc({ purpose: 'block' }, batch.ethCalls);
      metrics.ethCallsPerBlock.observe(batch.ethCalls);
      // The router reverts with a custom error; a failure WITHOUT revert data is most likely
      // out of gas (see CALL_GAS), which would silently shorten ladders.
      const silent = batch.results.filter((r) => !r.success && r.data === '0x').length;
      if (silent > 0) {
        metrics.silentCallFailures.inc(silent);
        silentFailures.failed(new Error(`${silent} calls failed without revert data (out of gas? raise CALL_GAS)`), {
          block: job.number,
        });
      } else silentFailures.ok();
      const pairs = decodeBlockResults(tracked, batch.results);
      const body = JSON.stringify({
        chainId: deps.ctx.chainId,
        blockNumber: job.number,
        blockTime: job.timestamp,
        pairs,
      });
      const written = await deps.books.write(job.number, body);
      const now = Date.now();
      metrics.computeSeconds.observe((now - started) / 1000);
      const outcome: BlockOutcome = written ? 'written' : 'not_newer';
      const latencyMs = now - job.seenAt;
      if (written) {
        metrics.bookBlock.set(job.number);
        metrics.blockToBook.observe(latencyMs / 1000);
      }
      // One line per computed block (HA tests count these: a block must never appear twice).
      log.debug('block computed', {
        block: job.number,
        outcome,
        pairs: pairs.length,
        calls: calls.length,
        ethCalls: batch.ethCalls,
        latencyMs,
        computeMs: now - started,
        callMs,
      });
      return done({
        blockNumber: job.number,
        outcome,
        latencyMs: written ? latencyMs : undefined,
        ethCalls: batch.ethCalls,
        computeMs: now - started,
        callMs,
      });
    } catch (err) {
      done({ blockNumber: job.number, outcome: 'failed' });
      throw err;
    }
  };
}
