/**
 * Computes and writes the book of one block (the BullMQ job handler).
 *
 * Idempotent and order-free: a job for a block older than this replica's newest head (or of
 * the same height but another hash: reorged away), or not newer than the stored book, is
 * skipped without touching the node; otherwise the whole book comes from ONE round trip
 * pinned to the block's hash (EIP-1898), and the write is a compare-and-set on the block
 * number and hash (store/book-store.ts), so a re-run (stalled job) or a race between replicas
 * can never move the book backwards, while a reorg at the same height replaces that book.
 *
 * The book expires BOOK_TTL_MS after the write, and never later than MAX_HEAD_LAG_MS after
 * its block's timestamp: a job that waited until its block is that old is not written
 * (`stale`), so a lagging node yields 503 instead of an old book served as live.
 *
 * Each pair with a reference is held against it (domain/reference-band.ts): its feed is read in
 * the same call, its standing goes with the book (the book's side key), and a pair the band
 * withholds is left out of the book, from the block that shows the breach.
 *
 * The call list (signatures, calldata) is usually ready when the job starts: made during the
 * previous block's call, for the timestamp foreseen (jobs/block-plans.ts), so the time from
 * head to book is the queue hop, the node's round trip and the write.
 */
import {
  type BandRecord,
  blockHashRef,
  bandTransitions,
  decodeBandRecord,
  encodeBandTransition,
  REFERENCE_STATUSES,
  encodeBandRecord,
  type Logger,
  type RpcTransport,
} from '@pmm/core';
import { decodeBlockResults, decodeFeedAnswers, type QuoteContext, type TrackedPairs } from '../chain/block-quotes';
import { blockBandRecord } from '../domain/reference-band';
import type { BlockHead } from '../chain/block-source';
import { executeCalls } from '../chain/call-batch';
import type { BlockOutcome, IndexerMetrics } from '../metrics';
import { outageLog } from '../outage-log';
import type { BookStore } from '../store/book-store';
import type { MidStore } from '../store/mid-store';
import type { BlockJobData } from './block-queue';
import { createBlockPlans } from './block-plans';
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
  /** Its default expiry is BOOK_TTL_MS, the longest a book lives after a write. */
  books: BookStore;
  /** The mid history (markouts): every computed block's tops of book. */
  mids?: MidStore;
  /** MAX_HEAD_LAG_MS: how long after its block's timestamp a book may still be served. */
  maxHeadLagMs: number;
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
  /** For computed blocks: ms from the first sight of the block to the job taken (the queue hop). */
  waitMs?: number;
  /** For computed blocks: ms to sign the sides and build the call list (about 0 when made ahead). */
  planMs?: number;
  /** For computed blocks: whether the call list was made ahead (jobs/block-plans.ts). */
  plannedAhead?: boolean;
  /** For computed blocks: ms of the node round trip alone (the EVM executing every quote()). */
  callMs?: number;
  /** For computed blocks: ms from the node's answer to the book in Redis (decode, build, write). */
  writeMs?: number;
}

export function createBlockProcessor(deps: BlockProcessorDeps): (job: BlockJobData) => Promise<BlockOutcome> {
  const { metrics, logger: log } = deps;
  const silentFailures = outageLog(log, 'block call');
  const plans = createBlockPlans({
    ctx: deps.ctx,
    multicall3: deps.multicall3,
    onError: (err) =>
      log.debug('block plan made ahead failed', { error: err instanceof Error ? err.message : String(err) }),
  });
  const done = (event: BlockEvent): BlockOutcome => {
    metrics.blocks.inc({ outcome: event.outcome });
    deps.onBlock?.(event);
    return event.outcome;
  };

  /** The standing of the pairs as metrics, and each change of a pair's service as a log line. */
  const reportBand = (tracked: TrackedPairs, band: BandRecord) => {
    for (const { base } of tracked.pairs) {
      const state = band.pairs[base.address.toLowerCase()];
      if (!state) continue;
      const pair = base.symbol;
      if (state.deviationBps !== undefined) metrics.referenceDeviation.set({ pair }, state.deviationBps);
      if (state.ageSeconds !== undefined) metrics.referenceAge.set({ pair }, state.ageSeconds);
      metrics.referenceOutOfBand.set({ pair, mode: state.mode }, state.served ? 0 : 1);
      for (const status of REFERENCE_STATUSES)
        metrics.referenceStatus.set({ pair, status }, state.status === status ? 1 : 0);
      if (state.since === band.block)
        log.log(state.served ? 'info' : 'warn', state.served ? 'pair in band' : 'pair out of band', {
          block: band.block,
          pair,
          base: base.address,
          ...state,
        });
    }
  };

  /** How long a book of a block of `timestamp` (s) may live if written now; <= 0: too old. */
  const bookLifeMs = (timestamp: number) =>
    Math.min(deps.books.ttlMs, timestamp * 1000 + deps.maxHeadLagMs - Date.now());

  return async (job) => {
    const taken = Date.now();
    const head = deps.latestHead();
    if (head && (job.number < head.number || (job.number === head.number && job.hash !== head.hash)))
      return done({ blockNumber: job.number, outcome: 'superseded' });
    if (bookLifeMs(job.timestamp) <= 0) return done({ blockNumber: job.number, outcome: 'stale' });
    const stored = await deps.books.storedBlock();
    if (stored !== null && (stored.number > job.number || (stored.number === job.number && stored.hash === job.hash)))
      return done({ blockNumber: job.number, outcome: 'already_stored' });

    const started = Date.now();
    try {
      const tracked = await deps.registry.ensure();
      const planStarted = Date.now();
      const { plan, ahead } = await plans.get(tracked, job.timestamp);
      const { calls } = plan;
      metrics.quoteCallsPerBlock.set(calls.length - 1); // every call but getReserveBalances
      let batch;
      const callStarted = Date.now();
      try {
        const answer = executeCalls(deps.rpc, calls, {
          block: blockHashRef(job.hash),
          multicall3: deps.multicall3,
          timeoutMs: deps.timeoutMs,
          gas: deps.callGas || undefined,
          aggregate3: plan.aggregate3,
        });
        // The next computed block's calls, made while the node runs these.
        plans.prepareNext(tracked, job);
        batch = await answer;
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
      const previousBand = decodeBandRecord(stored?.band);
      const band = blockBandRecord(tracked, pairs, decodeFeedAnswers(tracked, batch.results), previousBand, job);
      const body = JSON.stringify({
        chainId: deps.ctx.chainId,
        blockNumber: job.number,
        blockTime: job.timestamp,
        pairs: band ? pairs.filter((p) => !band.pairs[p.baseToken.toLowerCase()]?.withheld) : pairs,
      });
      const ttlMs = bookLifeMs(job.timestamp);
      if (ttlMs <= 0) return done({ blockNumber: job.number, outcome: 'stale' });
      const symbols = new Map(tracked.pairs.map((p) => [p.base.address.toLowerCase(), p.base.symbol]));
      const written = await deps.books.write(job.number, body, {
        hash: job.hash,
        ttlMs,
        band: band ? encodeBandRecord(band) : '',
        transitions: band
          ? bandTransitions(previousBand, band, (base) => symbols.get(base) ?? base).map(encodeBandTransition)
          : [],
      });
      if (written && band) reportBand(tracked, band);
      const now = Date.now();
      // After the book (whose latency is what integrators see); a newer book written meanwhile
      // does not make this block's tops wrong. A failed record costs markouts one block, not the book.
      await deps.mids?.record(job, pairs, band).catch((err: unknown) =>
        log.warn('mid history not recorded', {
          block: job.number,
          error: err instanceof Error ? err.message : String(err),
        }),
      );
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
        waitMs: taken - job.seenAt,
        planMs: callStarted - planStarted,
        plannedAhead: ahead,
        callMs,
        writeMs: now - callStarted - callMs,
      });
    } catch (err) {
      done({ blockNumber: job.number, outcome: 'failed' });
      throw err;
    }
  };
}
