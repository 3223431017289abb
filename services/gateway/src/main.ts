/**
 * Production entry point (`node services/gateway/dist/main.js`): loads the config, connects
 * Redis, seeds the development key if configured, serves the public API on PORT and the
 * operator endpoints on OPS_PORT, and drains on SIGTERM/SIGINT.
 */
import { createLogger, createRedis, listen, redisReady, shutdownOnSignals, ConfigError } from '@pmm/core';
import { loadGatewayConfig } from './config';
import { createApp } from './app';
import { seedDevKey } from './store/dev-key';

async function main(): Promise<void> {
  const config = loadGatewayConfig();
  const logger = createLogger({ service: 'gateway', level: config.logLevel });
  const redis = createRedis(config.redisUrl, { role: 'command', name: 'gateway', logger });
  const subscriber = createRedis(config.redisUrl, { role: 'subscriber', name: 'gateway-sub', logger });
  try {
    await redisReady(redis, 30_000);
  } catch {
    logger.warn('redis not reachable at start; serving 503 until it is');
  }
  const gateway = createApp({ config, redis, subscriber, logger });
  await gateway.start().catch((err: unknown) => logger.warn('book updates not subscribed yet', { error: err }));
  if (config.devApiKey) {
    await seedDevKey(gateway.keys, config.devApiKey, config.devApiKeyWhitelist);
    logger.warn('development API key seeded (DEV_API_KEY): do not use in production', { integrator: 'dev' });
  }
  const api = await listen(gateway.app, config.port, config.host);
  // Node's own limit on reading a request, a little above ours so that ours answers first.
  api.server.requestTimeout = config.requestTimeoutMs + 5_000;
  api.server.headersTimeout = Math.min(60_000, config.requestTimeoutMs + 5_000);
  const ops = await listen(gateway.opsApp, config.opsPort, config.opsHost);
  logger.info('gateway listening', {
    port: api.port,
    host: config.host,
    opsPort: ops.port,
    chains: config.servedChains,
  });
  shutdownOnSignals({
    // Open price streams never end by themselves: end them first, or the drain waits them out.
    served: [{ ...api, close: () => (gateway.closeStreams(), api.close()) }, ops],
    logger,
    cleanup: async () => {
      await gateway.close();
      redis.disconnect();
      subscriber.disconnect();
    },
  });
}

main().catch((err: unknown) => {
  // Config errors name the setting and never contain a secret's value.
  const message =
    err instanceof ConfigError ? err.message : err instanceof Error ? (err.stack ?? err.message) : String(err);
  process.stderr.write(`gateway failed to start: ${message}\n`);
  process.exit(1);
});
