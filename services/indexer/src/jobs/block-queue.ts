/**
 * HA coordination through BullMQ: one queue per chain (prefix `pmm:{<id>}:q`, hash-tagged so
 * a Redis Cluster keeps it in one slot), name `blocks`.
 *
 * - Every replica that sees a new head adds a job with jobId `block-<n>-<hash prefix>`:
 *   BullMQ keeps one job per id, so N replicas produce ONE job per block. (The hash part
 *   tells apart a block of a restarted chain or of a reorg; ids contain no ':' and are never
 *   plain integers, see docs/decisions/0061-bullmq.md.) Finished jobs are kept for a while so that a late
 *   replica's add still deduplicates; the handler also skips blocks already in the book.
 * - Announcements are coalesced: one add in flight per replica, and while it runs only the
 *   newest head waits for the next add (a flood of heads in one message makes two jobs, not
 *   one per head); a new hash at a height whose job is still waiting replaces that job, so a
 *   height has at most one waiting job.
 * - LIFO: the newest block is taken first; older jobs still queued are then skipped cheaply
 *   by the handler, so a slow replica never works through a backlog.
 * - One worker per replica, concurrency 1, a short lock: a SIGKILLed replica's job is
 *   retaken after about `lockMs` (and skipped if a newer book exists by then), so killing a
 *   replica costs at most a block or two.
 * - The producer connection fails fast (no offline queue): an add that cannot reach Redis
 *   is dropped, not queued for later (a stale block is worthless). The worker connection
 *   has `maxRetriesPerRequest: null` as BullMQ requires. Every Queue and Worker has an
 *   `error` listener.
 */
import { Queue, Worker, type Job } from 'bullmq';
import type { Logger, RedisClient } from '@pmm/core';
import type { BlockHead } from '../chain/block-source';
import type { BlockOutcome } from '../metrics';
import { outageLog } from '../outage-log';

const BLOCK_QUEUE_NAME = 'blocks';

/** What a block job carries: the head as the first replica saw it. */
export type BlockJobData = Pick<BlockHead, 'number' | 'timestamp' | 'hash' | 'seenAt'>;

/** Heights below the newest announced minus this are forgotten (their jobs are finished or superseded). */
const HEIGHTS_REMEMBERED = 64;

/** Finished jobs kept for late duplicates: this many seconds, at most this many jobs. */
const KEEP_FINISHED = { age: 120, count: 2_000 };

/** Deduplication id of a block job: `block-<number>-<first 12 hex digits of the hash>`. */
function blockJobId(head: Pick<BlockHead, 'number' | 'hash'>): string {
  return `block-${head.number}-${head.hash.replace(/^0x/, '').slice(0, 12).toLowerCase()}`;
}

export interface BlockQueue {
  /**
   * Adds the job of `head` (a no-op when another replica already did), or of a newer head
   * announced while an add is in flight. Never rejects: failures are logged.
   */
  announce(head: BlockHead): Promise<void>;
  close(): Promise<void>;
}

export function createBlockQueue(opts: { connection: RedisClient; prefix: string; logger: Logger }): BlockQueue {
  const queue = new Queue<BlockJobData, BlockOutcome>(BLOCK_QUEUE_NAME, {
    connection: opts.connection,
    prefix: opts.prefix,
  });
  const errors = outageLog(opts.logger, 'block queue error');
  const adds = outageLog(opts.logger, 'block job not queued');
  queue.on('error', (err: Error) => errors.failed(err));
  /** Job id added by this replica, by height: a reorged height's waiting job is removed. */
  const addedByHeight = new Map<number, string>();
  let adding = false;
  let next: BlockHead | undefined;

  const add = async (head: BlockHead) => {
    const data: BlockJobData = {
      number: head.number,
      timestamp: head.timestamp,
      hash: head.hash,
      seenAt: head.seenAt,
    };
    const jobId = blockJobId(head);
    const replaced = addedByHeight.get(head.number);
    try {
      // Only a waiting job is removed (BullMQ leaves a job that a worker holds); errors are harmless.
      if (replaced !== undefined && replaced !== jobId) await queue.remove(replaced).catch(() => 0);
      await queue.add('block', data, {
        jobId,
        lifo: true,
        attempts: 1,
        removeOnComplete: KEEP_FINISHED,
        removeOnFail: KEEP_FINISHED,
      });
      addedByHeight.set(head.number, jobId);
      for (const height of addedByHeight.keys())
        if (height < head.number - HEIGHTS_REMEMBERED) addedByHeight.delete(height);
      adds.ok();
      errors.ok();
    } catch (err) {
      // Dropped, not retried: by the time Redis is back a newer block will be there.
      adds.failed(err, { block: head.number });
    }
  };

  return {
    async announce(head) {
      next = head;
      if (adding) return;
      adding = true;
      try {
        while (next) {
          const head = next;
          next = undefined;
          await add(head);
        }
      } finally {
        adding = false;
      }
    },
    close: () => queue.close(),
  };
}

export interface BlockWorker {
  /** Starts (or resumes) taking jobs. */
  resume(): void;
  /** Stops taking new jobs (the one running finishes). */
  pause(): Promise<void>;
  close(): Promise<void>;
}

export function createBlockWorker(opts: {
  connection: RedisClient;
  prefix: string;
  lockMs: number;
  logger: Logger;
  process: (data: BlockJobData) => Promise<BlockOutcome>;
}): BlockWorker {
  const log = opts.logger;
  const worker = new Worker<BlockJobData, BlockOutcome>(
    BLOCK_QUEUE_NAME,
    (job: Job<BlockJobData>) => opts.process(job.data),
    {
      connection: opts.connection,
      prefix: opts.prefix,
      concurrency: 1,
      autorun: false,
      lockDuration: opts.lockMs,
      stalledInterval: opts.lockMs,
      // A job is retried at most once after a crash; by then it is usually superseded anyway.
      maxStalledCount: 1,
      // Seconds a blocking fetch waits when the queue is empty (also bounds close()).
      drainDelay: 1,
      removeOnComplete: KEEP_FINISHED,
      removeOnFail: KEEP_FINISHED,
    },
  );
  const errors = outageLog(log, 'block worker error');
  const failures = outageLog(log, 'block failed');
  worker.on('error', (err: Error) => errors.failed(err));
  worker.on('failed', (job: Job<BlockJobData> | undefined, err: Error) =>
    failures.failed(err, { block: job?.data.number }),
  );
  worker.on('completed', () => {
    errors.ok();
    failures.ok();
  });
  let started = false;
  return {
    resume() {
      if (!started) {
        started = true;
        worker
          .run()
          .catch((err: unknown) =>
            log.error('block worker stopped', { error: err instanceof Error ? err.message : String(err) }),
          );
      } else if (worker.isPaused()) {
        void worker.resume();
      }
    },
    async pause() {
      if (started && !worker.isPaused()) await worker.pause(true);
    },
    close: () => worker.close(),
  };
}
