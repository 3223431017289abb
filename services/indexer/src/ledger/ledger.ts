/**
 * Wires one chain's ledger process: the indexer's block source behind the indexer's head guard
 * (one definition of both) → the ledger follower → Redis; the 60 s markout per integrator for
 * the metrics; the operator endpoints. `ledger-main.ts` calls this with the loaded config; tests
 * call it in-process.
 */
import { hostname } from 'node:os';
import {
  LEDGER_MARKOUT_HORIZON_SECONDS,
  closeRedis,
  createLogger,
  createRedis,
  redisReady,
  midOf,
  parseMidRecord,
  redisKeys,
  type LedgerEntry,
  type Logger,
  type RedisClient,
  type Served,
} from '@pmm/core';
import { AuditReader, markoutBps, TracerChoice } from '@pmm/settlement';
import { nodeConnectionOptions, startBlockSource, type BlockHead } from '../chain/block-source';
import { createHeadGuard } from '../domain/head-guard';
import { chainFollowerChecks, serveOperatorEndpoints } from '../http/operator-server';
import type { LedgerConfig } from './ledger-config';
import { startLedgerFollower } from './ledger-follower';
import { createLedgerMetrics, type LedgerMetrics } from './ledger-metrics';
import { createLedgerStore } from './ledger-store';
import { RollingMarkouts } from './rolling-markouts';
import { transportChainReader } from './transport-chain-reader';

export interface LedgerDeps {
  logger?: Logger;
  defaultMetrics?: boolean;
  /** After each committed block (tests, the benchmark). */
  onCommit?: (block: number, entries: readonly LedgerEntry[], head: BlockHead) => void;
}

export interface RunningLedger {
  served: Served;
  metrics: LedgerMetrics;
  stop(): Promise<void>;
}

export async function startLedger(config: LedgerConfig, deps: LedgerDeps = {}): Promise<RunningLedger> {
  const log = (deps.logger ?? createLogger({ service: 'ledger', level: config.logLevel })).child({
    chainId: config.chainId,
    replica: `${hostname()}:${process.pid}`,
  });
  const metrics = createLedgerMetrics({ chainId: config.chainId, defaultMetrics: deps.defaultMetrics ?? true });
  const keys = redisKeys(config.redisKeyPrefix);
  const redis: RedisClient = createRedis(config.redisUrl, {
    role: 'command',
    name: `ledger-${config.chainId}`,
    logger: log,
  });
  // The first block otherwise races the connection and is logged as failed (a warning on every
  // start); a Redis still down is waited for by the follower's retries, as before.
  await redisReady(redis).catch(() => log.warn('redis not reachable at start-up; continuing'));
  const store = createLedgerStore(
    redis,
    {
      ledger: keys.ledger(config.chainId),
      cursor: keys.ledgerCursor(config.chainId),
      blocks: keys.ledgerBlocks(config.chainId),
      day: (day) => keys.ledgerDay(config.chainId, day),
    },
    config.maxReorgDepth,
  );

  const guard = createHeadGuard({
    maxLagMs: config.maxHeadLagMs,
    maxLeadMs: config.maxHeadLeadMs,
    maxJump: config.maxHeadJump,
  });
  const late: { wake?: () => void } = {};
  const source = startBlockSource({
    // Dropped messages counted as the indexer counts them: a node that floods or redirects shows on the ledger too.
    ...nodeConnectionOptions(config, (reason) => metrics.messagesDropped.inc({ reason })),
    logger: log,
    admit: (head) => {
      const verdict = guard.check(head, Date.now());
      if (verdict !== 'accept') metrics.headsRefused.inc({ reason: verdict });
      return verdict === 'accept';
    },
    onHead: (head) => {
      metrics.headBlock.set(head.number);
      late.wake?.();
    },
    onState: (state) => metrics.nodeUp.set(state === 'up' ? 1 : 0),
  });

  // The 60 s markout per integrator: each swap waits until a committed block is 60 s past it,
  // then reads the mid in force then (the indexer's mid history).
  const waiting: LedgerEntry[] = [];
  const rolling = new RollingMarkouts(redis, keys.ledgerMarkouts(config.chainId), metrics, log);
  // In the background: a Redis not up yet must not hold the start; what is recorded meanwhile comes after.
  rolling.load().catch((err: unknown) =>
    log.warn('rolling markouts of the last run not read', {
      error: err instanceof Error ? err.message : String(err),
    }),
  );
  const settleMarkouts = async (blockTime: number, block: number) => {
    const due = waiting.filter((e) => e.blockTime + LEDGER_MARKOUT_HORIZON_SECONDS <= blockTime);
    if (due.length === 0) return;
    const [json] = await redis.zrevrangebyscore(keys.mids(config.chainId), block, '-inf', 'LIMIT', 0, 1);
    const markouts: { integratorId: string; bps: number }[] = [];
    for (const e of due) {
      waiting.splice(waiting.indexOf(e), 1);
      const mid = json ? midOf(parseMidRecord(json), e.base) : undefined;
      if (mid !== undefined) markouts.push({ integratorId: e.integratorId, bps: markoutBps(e, mid) });
    }
    await rolling.add(markouts);
  };

  const follower = startLedgerFollower({
    chainId: config.chainId,
    router: config.deployment.contracts.router,
    helper: config.deployment.contracts.helper,
    rpc: source.rpc,
    reader: transportChainReader(source.rpc, config.chainId, config.rpcTimeoutMs),
    tracer: new TracerChoice(config.tracer),
    store,
    audit: new AuditReader(redis, keys),
    latestHead: source.latest,
    timeoutMs: config.rpcTimeoutMs,
    maxReorgDepth: config.maxReorgDepth,
    retryMs: config.retryMs,
    logger: log,
    onCommit: (block, entries, head, blockTime) => {
      metrics.ledgerBlock.set(block);
      metrics.lagBlocks.set(Math.max(0, head.number - block));
      metrics.lag.observe(Math.max(0, head.number - block));
      for (const e of entries) {
        const integrator = e.integratorId || '(unattributed)';
        metrics.swaps.inc({ integrator, pair: e.pair });
        metrics.notional.inc({ integrator, pair: e.pair }, Number(e.quoteAmount));
        if (!e.integratorId) continue;
        waiting.push(e);
        rolling.track(e.integratorId);
      }
      settleMarkouts(blockTime, block).catch((err: unknown) =>
        log.debug('markout not read', { error: err instanceof Error ? err.message : String(err) }),
      );
      deps.onCommit?.(block, entries, head);
    },
    onReorg: (_to, removed) => {
      metrics.reorgs.inc();
      metrics.orphanedSwaps.inc(removed);
    },
    onError: () => metrics.blockErrors.inc(),
  });
  late.wake = follower.wake;

  const served = await serveOperatorEndpoints(
    {
      logger: log,
      metrics: metrics.metrics,
      checks: chainFollowerChecks(redis, source.isUp),
      access: { allowedHosts: config.opsAllowedHosts, token: config.opsToken },
    },
    config.port,
    config.host,
  );
  log.info('ledger started', { port: served.port, transport: config.deployment.wsUrl ? 'websocket' : 'http polling' });

  let stopping: Promise<void> | undefined;
  const stop = () =>
    (stopping ??= (async () => {
      await follower.stop();
      await source.close();
      await served.close();
      await closeRedis(redis);
      log.info('ledger stopped');
    })());
  return { served, metrics, stop };
}
