/**
 * Builds and starts the whole signer from a loaded config: signing keys, Redis connections,
 * stores, app, HTTP server. `close()` drains in-flight requests, then releases Redis.
 * main.ts adds the process concerns (config errors, signals, exit); tests call this directly.
 */
import {
  checkRedisDurabilityWhenReady,
  createMetrics,
  DAY_MS,
  closeRedisConnections,
  createRedis,
  recordsConnection,
  roleServers,
  DurableWrites,
  durableCommandTimeoutMs,
  durabilityPolicy,
  HaltView,
  listen,
  redisKeys,
  redisReady,
  type Logger,
  type Served,
} from '@pmm/core';
import { compileSignRequestValidators } from '@pmm/protocol';
import { createApp } from './app';
import { checkQuoteValidity } from './check-quote-validity';
import type { SignerConfig } from './config';
import { closeSigningKeys, loadSigningKeys, type ChainSigners } from './load-signing-keys';
import { keyHealth } from './domain/key-health';
import { RedisAuditTrail } from './store/audit-trail';
import { IntegratorStore } from './store/integrator-store';
import { auditTrailSizeMetric } from './store/audit-trail-size';
import { PairRegistryCache } from './store/pair-registry-cache';
import { ReferenceStandings } from './store/reference-standings';
import { bookHeadReader } from './store/book-head';
import { createFirmQuotes } from './chain/firm-quotes';
import {
  closeFirmQuoteChains,
  firmQuoteChains,
  firmQuoteMetric,
  firmQuoteRoundTripMetric,
} from './chain/firm-quote-chains';

export interface RunningSigner {
  served: Served;
  signers: ChainSigners;
  pairs: PairRegistryCache;
  /** Drains the HTTP server (in-flight requests complete), then closes Redis. Idempotent. */
  close(): Promise<void>;
}

/** Starts the signer. Rejects with a ConfigError when a signing key cannot be loaded. */
export async function startSigner(config: SignerConfig, logger: Logger): Promise<RunningSigner> {
  compileSignRequestValidators();
  const metrics = createMetrics('signer');
  const signers = await loadSigningKeys(config, keyHealth(metrics, logger, config.servedChains));
  let firmChains: Awaited<ReturnType<typeof firmQuoteChains>>;
  try {
    // Before any Redis connection: a validity the router contradicts is a configuration error,
    // and so is a quoter key that cannot be opened.
    await checkQuoteValidity(Object.values(config.chains), config.deployments, logger);
    firmChains = await firmQuoteChains(config, logger, metrics);
  } catch (err) {
    await closeSigningKeys(signers);
    throw err;
  }
  for (const [chainId, signer] of signers) {
    // Addresses only: the key never leaves the signer's closure (or its module).
    logger.info('signing key loaded', { chainId, address: signer.address, backend: signer.backend });
  }
  const keys = redisKeys(config.redisKeyPrefix);
  // Two roles (core's redis-roles.ts): the pair registries and book heads on REDIS_URL; the
  // integrators, halts and audit trail on the records' server (the same connections when one
  // server holds both).
  const redis = createRedis(config.redisUrl, { role: 'command', name: 'signer', logger });
  const subscriber = createRedis(config.redisUrl, { role: 'subscriber', name: 'signer-sub', logger });
  const records = recordsConnection(config, redis, { role: 'command', name: 'signer', logger });
  const recordsSubscriber = recordsConnection(config, subscriber, { role: 'subscriber', name: 'signer-sub', logger });
  // Connections of its own. No auto-pipelining: RedisAuditTrail already sends the records of
  // one turn as one script call, and ioredis built a Pipeline object per call on top of it (seen
  // in a CPU profile; npm run bench gateway showed no difference either way within its noise).
  // In replica mode, REDIS_AUDIT_LANES of them (docs/decisions/0022-replica-mode-lanes-one-flight-each.md):
  // each WAIT holds its connection for a replica round trip, and may take up to its timeout (the
  // connection's own limit is set past it). A record waits for a connection only while every one
  // has a WAIT out; those that wait share the next one.
  const policy = durabilityPolicy(config, config.redisRecordsUrl);
  const auditLanes = Array.from({ length: policy.mode === 'replica' ? config.redisAuditLanes : 1 }, (_, i) =>
    createRedis(config.redisRecordsUrl, {
      role: 'command',
      name: i === 0 ? 'signer-audit' : `signer-audit-${i}`,
      logger,
      commandTimeoutMs: durableCommandTimeoutMs(policy),
    }),
  );
  // Normally Redis answers at once and the registries are loaded before the port opens. If it
  // does not, start anyway: /readyz says not ready, and the cache loads once Redis is back.
  const servers = roleServers(redis, records);
  await Promise.all(
    servers.map(({ client }) =>
      redisReady(client).catch(() => logger.warn('redis not reachable at start-up; continuing')),
    ),
  );
  // Each server by its role: the rebuildable one is warned about what it would lose, not the records.
  for (const { client, role } of servers) checkRedisDurabilityWhenReady(client, logger, role);
  const durability = new DurableWrites(auditLanes, policy);
  logDurability(durability, logger);
  const pairs = new PairRegistryCache({ redis, subscriber, keys, chains: config.servedChains, logger });
  await pairs.start();
  // The same subscriber connection carries the integrator invalidations.
  const integrators = new IntegratorStore({ redis: records, keys, subscriber: recordsSubscriber });
  await integrators.start();
  // The halts, on the same subscriber: re-read at each notice and five times a second.
  const halts = new HaltView({ redis: records, subscriber: recordsSubscriber, keys, logger });
  await halts.start();
  // Each pair's standing against its reference, written by the indexers with the books (REDIS_URL).
  const references = new ReferenceStandings({
    redis,
    subscriber,
    keys,
    chains: config.servedChains,
    deployments: config.deployments,
    logger,
  });
  await references.start();
  // On the command connection: an audit connection may be held by a WAIT.
  auditTrailSizeMetric(metrics, records, keys, config.servedChains);
  const originRates = new Map(config.servedChains.map((id) => [id, config.chains[id]?.originRate ?? 0n]));
  const quoteValiditySeconds = new Map(config.servedChains.map((id) => [id, config.chains[id]!.quoteValiditySeconds]));
  const app = createApp({
    logger,
    metrics,
    internalToken: config.internalToken,
    servedChains: config.servedChains,
    maxFee: config.maxFee,
    bodyLimitBytes: config.signBodyLimit,
    maxSignsInFlight: config.maxSignsInFlight,
    maxSignDeadlineMs: config.maxSignDeadlineMs,
    signers,
    originRates,
    quoteValiditySeconds,
    pairs,
    integrators,
    halts,
    references,
    audit: new RedisAuditTrail({
      keys,
      retentionMs: config.auditRetentionDays * DAY_MS,
      durability,
    }),
    dailySignatureQuota: config.dailySignatureQuota,
    firmQuotes: createFirmQuotes({
      chains: firmChains,
      bookHead: bookHeadReader(redis, keys),
      deadlineMs: config.firmQuoteDeadlineMs,
      onOutcome: firmQuoteMetric(metrics, config.servedChains),
      onRoundTrip: firmQuoteRoundTripMetric(metrics, config.servedChains),
    }),
    operatorAccess: { allowedHosts: config.opsAllowedHosts, token: config.opsToken },
    readiness: {
      // The audit lanes by their state, not a PING: in replica mode a PING would queue behind the
      // lane's WAIT, and replicas slower than the readiness timeout would take every signer out.
      redis: async () => {
        const down = auditLanes.filter((lane) => lane.status !== 'ready').length;
        if (down > 0) throw new Error(`${down} of ${auditLanes.length} audit connections not ready`);
        await Promise.all(servers.map(({ client }) => client.ping()));
      },
      // Not ready while the halts cannot be read: every sign would be refused (fail closed).
      halts: async () => {
        halts.current();
      },
      // Not ready while an audit record could not be confirmed durable (every sign would be 503).
      durability: async () => {
        await durability.begin();
      },
      keys: async () => {
        const missing = config.servedChains.filter((id) => !signers.has(id));
        if (missing.length > 0) throw new Error(`no signing key for chain ${missing.join(', ')}`);
      },
    },
  });
  const served = await listen(app, config.port, config.host, {
    // End-to-end limit of one request (docs/decisions/0010-body-size-and-time-limits.md).
    timeouts: { headersMs: config.requestTimeoutMs, requestMs: config.requestTimeoutMs },
    logger,
  });
  logger.info('signer listening', { host: config.host, port: served.port, chains: config.servedChains });
  let closing: Promise<void> | undefined;
  return {
    served,
    signers,
    pairs,
    close: () =>
      (closing ??= (async () => {
        await served.close();
        await pairs.close();
        await integrators.stop();
        await halts.stop();
        await references.stop();
        await closeRedisConnections([redis, subscriber, records, recordsSubscriber, ...auditLanes]);
        await closeFirmQuoteChains(firmChains);
        await closeSigningKeys(signers);
      })()),
  };
}

/** Says at start how audit records are confirmed, and why signing will fail when they cannot be. */
function logDurability(durability: DurableWrites, logger: Logger): void {
  const { mode, replicas, waitTimeoutMs } = durability.policy;
  if (mode === 'none') {
    logger.warn(
      "REDIS_DURABILITY=none: audit records are not confirmed durable; a Redis crash or fail-over can lose signed quotes' records",
      {
        check: 'durable-writes',
      },
    );
    return;
  }
  logger.info('audit records confirmed durable before a signature leaves', {
    check: 'durable-writes',
    mode,
    ...(mode === 'replica' ? { replicas, waitTimeoutMs } : {}),
  });
  redisReady(durability.redis, 60_000)
    .then(() => durability.begin())
    .catch((err: unknown) =>
      logger.error('audit records cannot be confirmed durable: every sign answer is 503 until Redis is fixed', {
        check: 'durable-writes',
        error: err instanceof Error ? err.message : String(err),
      }),
    );
}
