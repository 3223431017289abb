/**
 * Wires one chain's ledger process: the indexer's block source behind the indexer's head guard
 * (one definition of both) → the ledger follower → Redis; the 60 s markout per integrator for
 * the metrics; each signature's fate judged at its deadline in the block's commit (deadline-fates.ts:
 * the day totals, the metrics, the unused limit); the limits on executed swaps, when any is set
 * (limits.ts); the operator endpoints.
 * `ledger-main.ts` calls this with the loaded config; tests call it in-process.
 */
import { hostname } from 'node:os';
import {
  DurableWrites,
  durableCommandTimeoutMs,
  LEDGER_MARKOUT_HORIZON_SECONDS,
  closeRedisConnections,
  rebuildableConnection,
  createLogger,
  createRedis,
  durabilityPolicy,
  redisReady,
  redisKeys,
  type LedgerEntry,
  type LedgerRevert,
  type Logger,
  type RedisClient,
  type Served,
} from '@pmm/core';
import { AuditReader, HORIZONS, TracerChoice } from '@pmm/operator';
import { nodeConnectionOptions, startBlockSource, type BlockHead } from '../chain/block-source';
import { createHeadGuard } from '../domain/head-guard';
import { chainFollowerChecks, serveOperatorEndpoints } from '../http/operator-server';
import { DeadlineFates, startFromLedger, type DeadlineFate } from './deadline-fates';
import type { LedgerConfig } from './ledger-config';
import { startLedgerFollower } from './ledger-follower';
import { createLedgerMetrics, type LedgerMetrics } from './ledger-metrics';
import { createLedgerStore, ledgerStoreKeys, type LedgerStore } from './ledger-store';
import { anyLimit, startLimits } from './limits';
import { PendingMarkouts, redisMidHistory } from './pending-markouts';
import { RollingMarkouts, type IntegratorMarkout } from './rolling-markouts';
import { transportChainReader } from './transport-chain-reader';

export interface LedgerDeps {
  logger?: Logger;
  defaultMetrics?: boolean;
  /** After each committed block (tests, the benchmark). */
  onCommit?: (
    block: number,
    entries: readonly LedgerEntry[],
    head: BlockHead,
    reverts: readonly LedgerRevert[],
  ) => void;
}

export interface RunningLedger {
  served: Served;
  metrics: LedgerMetrics;
  stop(): Promise<void>;
}

/** A swap still without its 60 s markout an hour on (the mid history stopped): none. */
const MARKOUT_MAX_WAIT_SECONDS = 3_600;
/**
 * How long the judging of fates keeps calls and judgements, and how far before the ledger's start
 * it reads the trail and the ledger's calls: a signature is signed up to a validity before its
 * deadline and its calls begin a minute before that (core's FATE_CALLS); 15 minutes covers every
 * chain's validity and the deepest reorg followed.
 */
const FATE_KEEP_SECONDS = 900;

export async function startLedger(config: LedgerConfig, deps: LedgerDeps = {}): Promise<RunningLedger> {
  const log = (deps.logger ?? createLogger({ service: 'ledger', level: config.logLevel })).child({
    chainId: config.chainId,
    replica: `${hostname()}:${process.pid}`,
  });
  const metrics = createLedgerMetrics({ chainId: config.chainId, defaultMetrics: deps.defaultMetrics ?? true });
  const keys = redisKeys(config.redisKeyPrefix);
  // Mostly records (its ledger, the audit trail it attributes from, the halts its limits write);
  // the mid history it reads is the indexer's, rebuildable, on REDIS_URL.
  const redis: RedisClient = createRedis(config.redisRecordsUrl, {
    role: 'command',
    name: `ledger-${config.chainId}`,
    logger: log,
  });
  const midsRedis = rebuildableConnection(config, redis, {
    role: 'command',
    name: `ledger-${config.chainId}-mids`,
    logger: log,
  });
  // The first block otherwise races the connection and is logged as failed (a warning on every
  // start); a Redis still down is waited for by the follower's retries, as before.
  await redisReady(redis).catch(() => log.warn('redis not reachable at start-up; continuing'));
  const ledgerStore = createLedgerStore(redis, ledgerStoreKeys(keys, config.chainId), config.maxReorgDepth);
  // Each signature judged at the first block past its deadline, in that block's commit: the
  // unused limit needs its window of firm fates again after a restart, so the trail is read from
  // that far back (the fates judged before the restart come back `replayed`, not counted twice).
  const fates = new DeadlineFates(redis, keys.audit(config.chainId), FATE_KEEP_SECONDS);
  const lookback = FATE_KEEP_SECONDS + (config.limits.unused ? config.limits.windowSeconds : 0);
  /** The fates judged at the block just committed (the follower's onCommit reads them). */
  let judgedNow: DeadlineFate[] = [];
  const store: LedgerStore = {
    cursor: () => ledgerStore.cursor(),
    hashAt: (n) => ledgerStore.hashAt(n),
    async commit(block, entries, reverts) {
      if (!fates.started) await startFromLedger(fates, redis, keys, config.chainId, lookback);
      fates.add(entries, reverts);
      try {
        const judged = await fates.judge(block.number, block.time);
        await ledgerStore.commit(
          block,
          entries,
          reverts,
          judged.filter((f) => !f.replayed),
        );
        judgedNow = judged;
      } catch (err) {
        // The block is read and committed again: its calls and judgements with it.
        fates.rollback(block.number - 1);
        throw err;
      }
    },
    async rollback(to) {
      const removed = await ledgerStore.rollback(
        to,
        fates.judgedAbove(to.number).filter((f) => !f.replayed),
      );
      fates.rollback(to.number);
      return removed;
    },
  };

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

  // The 60 s markout per integrator: each swap waits until the indexer's mid history is 60 s
  // past it, then reads the mid in force then, and the pair's reference then.
  const history = redisMidHistory(midsRedis, {
    mids: keys.mids(config.chainId),
    midTimes: keys.midTimes(config.chainId),
  });
  const rolling = new RollingMarkouts(redis, keys.ledgerMarkouts(config.chainId), metrics, log);
  // In the background: a Redis not up yet must not hold the start; what is recorded meanwhile comes after.
  rolling.load().catch((err: unknown) =>
    log.warn('rolling markouts of the last run not read', {
      error: err instanceof Error ? err.message : String(err),
    }),
  );
  const markouts60s: IntegratorMarkout[] = [];
  const waiting = new PendingMarkouts(
    HORIZONS.find((h) => h.seconds === LEDGER_MARKOUT_HORIZON_SECONDS)!.key,
    history,
    (e, m) => markouts60s.push({ integratorId: e.integratorId, ...m }),
    MARKOUT_MAX_WAIT_SECONDS,
    // A zero leg (a dust swap the router paid nothing for): no price, so no markout, in no mean.
    (e, reason) =>
      log.info(`swap without markout: ${reason}`, {
        integratorId: e.integratorId,
        txHash: e.txHash,
        callIndex: e.callIndex,
        baseAmount: e.baseAmount,
        quoteAmount: e.quoteAmount,
      }),
  );
  const settleMarkouts = async () => {
    await waiting.settle();
    await rolling.add(markouts60s.splice(0));
  };
  // A trip's halt is a durable write: its WAIT may take up to its own timeout, past the default
  // command limit of the ledger's connection, so it gets one of its own (only when limits are on).
  const policy = durabilityPolicy(config, config.redisRecordsUrl);
  const haltWriter = anyLimit(config.limits)
    ? createRedis(config.redisRecordsUrl, {
        role: 'command',
        name: `ledger-${config.chainId}-halts`,
        logger: log,
        commandTimeoutMs: durableCommandTimeoutMs(policy),
      })
    : undefined;
  const executedLimits = haltWriter
    ? startLimits({
        chainId: config.chainId,
        config: config.limits,
        redis,
        keys,
        durability: new DurableWrites(haltWriter, policy),
        history,
        metrics,
        logger: log,
      })
    : undefined;

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
    maxLeadMs: config.maxHeadLeadMs,
    maxReorgDepth: config.maxReorgDepth,
    retryMs: config.retryMs,
    logger: log,
    onCommit: (block, entries, head, blockTime, reverts) => {
      metrics.ledgerBlock.set(block);
      metrics.lagBlocks.set(Math.max(0, head.number - block));
      metrics.lag.observe(Math.max(0, head.number - block));
      for (const e of entries) {
        const integrator = e.integratorId || '(unattributed)';
        metrics.swaps.inc({ integrator, pair: e.pair });
        metrics.notional.inc({ integrator, pair: e.pair }, Number(e.quoteAmount));
        if (!e.integratorId) continue;
        waiting.add(e);
        rolling.track(e.integratorId);
      }
      for (const r of reverts)
        metrics.reverts.inc({ integrator: r.integratorId || '(unattributed)', reason: r.reason });
      const judged = judgedNow;
      judgedNow = [];
      for (const f of judged) {
        if (f.replayed) continue;
        if (f.firm) metrics.firmSignatures.inc({ integrator: f.integratorId, fate: f.fate });
        if (f.delaySeconds !== undefined)
          metrics.signToExecution.observe({ integrator: f.integratorId }, f.delaySeconds);
      }
      settleMarkouts().catch((err: unknown) =>
        log.debug('markout not read', { error: err instanceof Error ? err.message : String(err) }),
      );
      executedLimits?.onCommit(block, entries, blockTime, reverts, judged);
      deps.onCommit?.(block, entries, head, reverts);
    },
    onReorg: (to, removed) => {
      metrics.reorgs.inc();
      metrics.orphanedSwaps.inc(removed.swaps);
      metrics.orphanedReverts.inc(removed.reverts);
      waiting.rollback(to);
      executedLimits?.onReorg(to);
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
  log.info('ledger started', {
    port: served.port,
    transport: config.deployment.wsUrl ? 'websocket' : 'http polling',
    limits: executedLimits ? config.limits : 'off',
  });

  let stopping: Promise<void> | undefined;
  const stop = () =>
    (stopping ??= (async () => {
      await follower.stop();
      await executedLimits?.idle();
      await source.close();
      await served.close();
      await closeRedisConnections([redis, midsRedis, ...(haltWriter ? [haltWriter] : [])]);
      log.info('ledger stopped');
    })());
  return { served, metrics, stop };
}
