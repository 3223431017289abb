/**
 * Wires one chain's indexer: node connection (block source) → BullMQ block jobs → block
 * processor → Redis book; the pair registry refresher; the liveness watchdog; the replica's
 * presence (store/presence-announcer.ts); the operator endpoints. `main.ts` calls this with the loaded config; tests call it in-process.
 *
 * Liveness: the book key carries a TTL of BOOK_TTL_MS, renewed by every write, so a book
 * that nobody refreshes (dead process, halted chain, failing calls) disappears by itself.
 * In addition, when THIS replica's node connection has been down for BOOK_TTL_MS, it
 * deletes the book unless a newer one was written meanwhile (by a replica that still
 * reaches a node). Nothing has to be repaired when the node returns: the next block
 * writes a fresh book.
 */
import { hostname } from 'node:os';
import {
  createLogger,
  openQuoterKey,
  checkRedisDurabilityWhenReady,
  closeRedis,
  createRedis,
  oneRedisServer,
  redisKeys,
  type Logger,
  type RedisClient,
  type Served,
  createHttpTransport,
  resolveBand,
} from '@pmm/core';
import type { KeySigner } from '@pmm/protocol';
import type { QuoteContext } from './chain/block-quotes';
import { createHeadGuard } from './domain/head-guard';
import { nodeConnectionOptions, startBlockSource, type BlockHead, type BlockSource } from './chain/block-source';
import { countingRpc } from './chain/counting-rpc';
import type { IndexerConfig } from './config';
import { chainFollowerChecks, serveOperatorEndpoints } from './http/operator-server';
import { createBlockProcessor, type BlockEvent } from './jobs/block-processor';
import { createBlockQueue, createBlockWorker, type BlockWorker } from './jobs/block-queue';
import { createRegistryRefresher, type RegistryRefresher } from './jobs/registry-refresher';
import { createIndexerMetrics, type HeadRefusal, type IndexerMetrics } from './metrics';
import { outageLog } from './outage-log';
import { createBookStore, type BookStore } from './store/book-store';
import { createMidStore } from './store/mid-store';
import { createRegistryStore, registryTtlMs } from './store/registry-store';
import { startPresenceAnnouncer } from './store/presence-announcer';

export interface IndexerDeps {
  logger?: Logger;
  /** Collect Node's default metrics (off in tests that start several indexers). Default true. */
  defaultMetrics?: boolean;
  /** Observer of every block job (tests, benchmarks). */
  onBlock?: (event: BlockEvent) => void;
  /** This replica's id in logs and in its presence; default `<hostname>:<pid>` (tests running two in one process give each its own). */
  replica?: string;
}

export interface RunningIndexer {
  /** The operator endpoints' server (drained by shutdownOnSignals). */
  served: Served;
  metrics: IndexerMetrics;
  registry: RegistryRefresher;
  books: BookStore;
  blockSource: BlockSource;
  /** Closes worker, queue, node connection, Redis and the server. Idempotent. */
  stop(): Promise<void>;
}

const errorText = (err: unknown) => (err instanceof Error ? err.message : String(err));

/** The log's words for each refusal of domain/head-guard.ts. */
const REFUSED_BECAUSE: Record<HeadRefusal, string> = {
  lagging: 'older than MAX_HEAD_LAG_MS',
  ahead: 'ahead of the clock by more than MAX_HEAD_LEAD_MS',
  jump: 'jump above MAX_HEAD_JUMP, unconfirmed',
};

/**
 * The quoter key (core's quoter-key.ts): in memory, or in a PKCS#11 module, whose failures fail
 * the block jobs until it recovers, so the book goes stale and expires rather than being
 * computed without quotes. A key that cannot be opened is a ConfigError naming the module, token
 * and label, never the PIN.
 */
function openIndexerQuoterKey(config: IndexerConfig, log: Logger): Promise<KeySigner> {
  return openQuoterKey(config.quoter, {
    onFailure: (reason) => log.error('quoter key unavailable; blocks fail until its module recovers', { reason }),
    onPinRefused: (reason) =>
      log.error(
        'the token refused the quoter key PIN: no further login is tried (the token would lock); write the new PIN to the PIN file, or restart',
        { reason },
      ),
    onRecovered: () => log.info('quoter key available again'),
  });
}

/**
 * Starts indexing `config.chainId`. Resolves once the operator endpoints listen; the node
 * and Redis connections come up (and come back) on their own.
 */
export async function startIndexer(config: IndexerConfig, deps: IndexerDeps = {}): Promise<RunningIndexer> {
  const replica = deps.replica ?? `${hostname()}:${process.pid}`;
  const log = (deps.logger ?? createLogger({ service: 'indexer', level: config.logLevel })).child({
    chainId: config.chainId,
    replica,
  });
  const metrics = createIndexerMetrics({ chainId: config.chainId, defaultMetrics: deps.defaultMetrics ?? true });
  const signer = await openIndexerQuoterKey(config, log);
  const keys = redisKeys(config.redisKeyPrefix);
  const { contracts } = config.deployment;
  const ctx: QuoteContext = {
    chainId: config.chainId,
    router: contracts.router,
    helper: contracts.helper,
    verifier: contracts.verifier,
    signer,
  };

  const redis: RedisClient = createRedis(config.redisUrl, {
    role: 'command',
    name: `indexer-${config.chainId}`,
    logger: log,
  });
  const workerRedis: RedisClient = createRedis(config.redisUrl, {
    role: 'worker',
    name: `indexer-${config.chainId}-worker`,
    logger: log,
  });
  // REDIS_URL: the records' server too unless REDIS_RECORDS_URL names another.
  checkRedisDurabilityWhenReady(redis, log, oneRedisServer(config) ? 'records' : 'rebuildable');
  const books = createBookStore(redis, {
    keys: { book: keys.book(config.chainId), updates: keys.updates(config.chainId) },
    chainId: config.chainId,
    ttlMs: config.bookTtlMs,
  });
  const registryStore = createRegistryStore(
    redis,
    {
      pairs: keys.pairs(config.chainId),
      updates: keys.updates(config.chainId),
    },
    registryTtlMs(config.registryRefreshMs),
  );
  const queue = createBlockQueue({ connection: redis, prefix: keys.queuePrefix(config.chainId), logger: log });

  // Late-bound: the block source's callbacks need the worker and registry, which need the source's rpc.
  const late: { source?: BlockSource; registry?: RegistryRefresher; worker?: BlockWorker } = {};
  let downSince: number | undefined;
  let lastHeadBeforeDown: number | undefined;
  let deletedThisOutage = false;

  metrics.maxHeadLag.set(config.maxHeadLagMs / 1000);
  metrics.maxHeadLead.set(config.maxHeadLeadMs / 1000);
  const headGuard = createHeadGuard({
    maxLagMs: config.maxHeadLagMs,
    maxLeadMs: config.maxHeadLeadMs,
    maxJump: config.maxHeadJump,
  });
  const refusedHeads = outageLog(log, 'head refused');
  /** Newest valid head the node sent, admitted or not: the lag and lead metrics read it. */
  let lastSeen: BlockHead | undefined;
  const updateHeadClock = () => {
    if (!lastSeen) return;
    const behind = Date.now() / 1000 - lastSeen.timestamp;
    metrics.headLag.set(Math.max(0, behind));
    metrics.headLead.set(Math.max(0, -behind));
  };
  const admit = (head: BlockHead) => {
    lastSeen = head;
    updateHeadClock();
    const verdict = headGuard.check(head, Date.now());
    if (verdict === 'accept') {
      refusedHeads.ok();
      return true;
    }
    metrics.headsRefused.inc({ reason: verdict });
    refusedHeads.failed(REFUSED_BECAUSE[verdict], { block: head.number, blockTime: head.timestamp });
    return false;
  };

  const onHead = (head: BlockHead) => {
    metrics.headBlock.set(head.number);
    void queue.announce(head);
  };

  const onState = (state: 'up' | 'down', reason?: string) => {
    metrics.nodeUp.set(state === 'up' ? 1 : 0);
    if (state === 'up') {
      log.info('node connection up', { transport: late.source?.rpc.kind });
      downSince = undefined;
      deletedThisOutage = false;
      // The node may be a restarted chain with other tokens: the next block re-reads the registry.
      late.registry?.invalidate();
      late.worker?.resume();
    } else {
      log.info('node connection down', { reason });
      downSince = Date.now();
      lastHeadBeforeDown = late.source?.latest()?.number;
      // Jobs need the node: leave them to replicas that still reach it.
      late.worker?.pause().catch(() => undefined);
    }
  };

  const connection = nodeConnectionOptions(config, (reason) => metrics.messagesDropped.inc({ reason }));
  const blockSource = startBlockSource({
    ...connection,
    logger: log,
    admit,
    onHead,
    onState,
    onReconnect: () => metrics.reconnects.inc(),
  });
  late.source = blockSource;

  const countRegistryCalls = {
    ethCalls: (n: number) => metrics.ethCalls.inc({ purpose: 'registry' }, n),
    error: () => metrics.rpcErrors.inc({ purpose: 'registry' }),
  };
  const registryRpc = countingRpc(blockSource.rpc, countRegistryCalls);
  const confirmRpc = config.deployment.confirmRpcUrl
    ? countingRpc(createHttpTransport(config.deployment.confirmRpcUrl, connection.limits), countRegistryCalls)
    : undefined;
  const registryRef = createRegistryRefresher({
    rpc: registryRpc,
    confirmRpc,
    latestHead: blockSource.latest,
    nodeUp: blockSource.isUp,
    ctx,
    multicall3: contracts.multicall3,
    ladder: config.ladder,
    pinnedDecimals: config.deployment.pinnedDecimals,
    references: Object.fromEntries(
      Object.entries(config.deployment.references ?? {}).map(([base, r]) => [
        base.toLowerCase(),
        { feed: r.feed, band: resolveBand(config.referenceBand, r.band) },
      ]),
    ),
    store: registryStore,
    refreshMs: config.registryRefreshMs,
    timeoutMs: config.rpcTimeoutMs,
    metrics,
    logger: log,
  });
  registryRef.start();
  late.registry = registryRef;

  const processBlock = createBlockProcessor({
    ctx,
    multicall3: contracts.multicall3,
    callGas: config.callGas,
    rpc: blockSource.rpc,
    latestHead: blockSource.latest,
    registry: registryRef,
    books,
    mids: createMidStore(redis, {
      keys: { mids: keys.mids(config.chainId), midTimes: keys.midTimes(config.chainId) },
      retentionSeconds: config.midsRetentionSeconds,
    }),
    maxHeadLagMs: config.maxHeadLagMs,
    timeoutMs: config.rpcTimeoutMs,
    metrics,
    logger: log,
    onBlock: deps.onBlock,
  });
  const worker = createBlockWorker({
    connection: workerRedis,
    prefix: keys.queuePrefix(config.chainId),
    lockMs: config.jobLockMs,
    logger: log,
    process: processBlock,
  });
  late.worker = worker;
  if (blockSource.isUp()) worker.resume();

  // Redis came back (possibly empty, after a restart): put the registry back at once
  // rather than at the next periodic refresh.
  let redisWasDown = false;
  redis.on('error', () => (redisWasDown = true));
  redis.on('ready', () => {
    if (!redisWasDown) return;
    redisWasDown = false;
    registryRef.rewrite().catch((err: unknown) => log.warn('pair registry not rewritten', { error: errorText(err) }));
  });

  const watchdog = setInterval(
    () => {
      updateHeadClock();
      if (downSince === undefined || deletedThisOutage || Date.now() - downSince < config.bookTtlMs) return;
      if (lastHeadBeforeDown === undefined) return;
      books
        .deleteIfNotAbove(lastHeadBeforeDown)
        .then((deleted) => {
          deletedThisOutage = true;
          if (deleted) {
            metrics.booksDeleted.inc();
            log.info('book removed: node unreachable for longer than the staleness', { lastBlock: lastHeadBeforeDown });
          }
        })
        .catch((err: unknown) => log.warn('book removal failed', { error: errorText(err) }));
    },
    Math.min(1_000, Math.ceil(config.bookTtlMs / 4)),
  );
  watchdog.unref();

  const presence = startPresenceAnnouncer({
    redis,
    keys,
    chainId: config.chainId,
    replica,
    transport: config.deployment.wsUrl ? 'websocket' : 'http polling',
    state: () => ({ nodeUp: blockSource.isUp(), headBlock: blockSource.latest()?.number ?? null }),
  });

  const served = await serveOperatorEndpoints(
    {
      logger: log,
      metrics: metrics.metrics,
      checks: {
        ...chainFollowerChecks(redis, blockSource.isUp),
        registry: async () => {
          if (!registryRef.current()) throw new Error('pair registry not loaded');
        },
      },
      access: { allowedHosts: config.opsAllowedHosts, token: config.opsToken },
    },
    config.port,
    config.host,
  );
  log.info('indexer started', {
    port: served.port,
    quoter: signer.address,
    quoterBackend: signer.backend,
    transport: config.deployment.wsUrl ? 'websocket' : 'http polling',
    batching: contracts.multicall3 ? 'multicall3' : 'json-rpc batch',
  });

  let stopping: Promise<void> | undefined;
  const stop = () =>
    (stopping ??= (async () => {
      clearInterval(watchdog);
      registryRef.stop();
      await presence.stop();
      // Worker first: it finishes its job (the book write needs Redis and the node).
      await worker.close().catch((err: unknown) => log.warn('worker close failed', { error: errorText(err) }));
      await queue.close().catch(() => undefined);
      await blockSource.close();
      confirmRpc?.close();
      await served.close();
      await Promise.all([redis, workerRedis].map((client) => closeRedis(client)));
      await signer.close?.();
      log.info('indexer stopped');
    })());

  return { served, metrics, registry: registryRef, books, blockSource, stop };
}
