/**
 * Production entry point (`node services/gateway/dist/main.js`): loads the config, connects
 * Redis, seeds the development key if configured, serves the public API on PORT and the
 * operator endpoints and console on OPS_PORT, and drains on SIGTERM/SIGINT (start-up, errors and exit codes:
 * core's runService).
 */
import {
  checkRedisDurabilityWhenReady,
  closeRedisConnections,
  createRedis,
  recordsConnection,
  listen,
  roleServers,
  redisReady,
  runService,
  type Logger,
} from '@pmm/core';
import { GATEWAY_SETTINGS, gatewayTimeouts, loadGatewayConfig, type GatewayConfig } from './config';
import { createApp } from './app';
import { keepDevKeySeeded } from './keys/dev-key';

/** How often the gateway checks that the development key is still in Redis. */
const DEV_KEY_CHECK_MS = 2_000;

async function start(config: GatewayConfig, logger: Logger) {
  // Two roles (core's redis-roles.ts): books, rate limits and stream slots on REDIS_URL; keys,
  // integrators and halts on the records' server (the same connections when one server holds both).
  const redis = createRedis(config.redisUrl, { role: 'command', name: 'gateway', logger });
  const subscriber = createRedis(config.redisUrl, { role: 'subscriber', name: 'gateway-sub', logger });
  const records = recordsConnection(config, redis, { role: 'command', name: 'gateway', logger });
  const recordsSubscriber = recordsConnection(config, subscriber, { role: 'subscriber', name: 'gateway-sub', logger });
  const connections = [redis, subscriber, records, recordsSubscriber];
  const servers = roleServers(redis, records);
  try {
    await Promise.all(servers.map(({ client }) => redisReady(client, 30_000)));
  } catch {
    logger.warn('redis not reachable at start; serving 503 until it is');
  }
  // Each server by its role: the rebuildable one is warned about what it would lose, not the records.
  for (const { client, role } of servers) checkRedisDurabilityWhenReady(client, logger, role);
  const gateway = createApp({ config, redis, subscriber, records, recordsSubscriber, logger });
  await gateway.start().catch((err: unknown) => logger.warn('book updates not subscribed yet', { error: err }));
  let devKey: ReturnType<typeof keepDevKeySeeded> | undefined;
  if (config.devApiKey) {
    devKey = keepDevKeySeeded(gateway.keys, config.devApiKey, config.devApiKeyWhitelist, {
      intervalMs: DEV_KEY_CHECK_MS,
      onReseed: () => logger.warn('development API key was missing from Redis: seeded again', { integrator: 'dev' }),
      onError: () => undefined, // Redis down: the next check retries; the outage is logged by the client.
    });
    const outcome = await devKey.ready;
    if (outcome === 'seeded')
      logger.warn('development API key seeded (DEV_API_KEY): do not use in production', { integrator: 'dev' });
    else if (outcome === 'revoked')
      logger.warn('development API key (DEV_API_KEY) was revoked: not seeded again', { integrator: 'dev' });
  }
  const api = await listen(gateway.app, config.port, config.host, { timeouts: gatewayTimeouts(config), logger });
  const ops = await listen(gateway.opsApp, config.opsPort, config.opsHost, { logger });
  logger.info('gateway listening', {
    port: api.port,
    host: config.host,
    opsPort: ops.port,
    chains: config.servedChains,
  });
  return {
    // Open price streams never end by themselves: end them first, or the drain waits them out.
    served: [
      { ...api, close: () => (gateway.closeStreams(), api.close()) },
      { ...ops, close: () => (gateway.closeStreams(), ops.close()) },
    ],
    close: async () => {
      devKey?.stop();
      await gateway.close();
      // As the signer and the indexer close theirs: what was sent last (a stream's slot release) is answered first.
      await closeRedisConnections(connections);
    },
  };
}

void runService({ name: 'gateway', settings: GATEWAY_SETTINGS, loadConfig: loadGatewayConfig, start });
