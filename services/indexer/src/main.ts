/**
 * Production entry point: `node services/indexer/dist/main.js` (one process per chain; run
 * several with the same CHAIN_ID for HA). Loads and validates the config (a bad setting stops
 * start-up with a message naming it), starts the indexer, and on SIGTERM/SIGINT closes the
 * worker, the queue, the node connection and Redis.
 */
import { ConfigError, createLogger, describeConfig, shutdownOnSignals } from '@pmm/core';
import { INDEXER_SETTINGS, loadIndexerConfig } from './config';
import { startIndexer } from './indexer';

async function main(): Promise<void> {
  if (process.argv.includes('--help')) {
    console.log(
      [
        '@pmm/indexer settings (environment, or CONFIG_FILE JSON):',
        ...describeConfig(INDEXER_SETTINGS).map((l) => `  ${l}`),
      ].join('\n'),
    );
    return;
  }
  let config;
  try {
    config = loadIndexerConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(`indexer: invalid configuration: ${err.message}`);
      process.exit(2);
    }
    throw err;
  }
  const logger = createLogger({ service: 'indexer', level: config.logLevel });
  process.on('unhandledRejection', (reason) => logger.error('unhandled rejection', { error: reason }));
  const indexer = await startIndexer(config, { logger });
  shutdownOnSignals({ served: [indexer.served], cleanup: indexer.stop, logger });
}

main().catch((err: unknown) => {
  console.error('indexer: start-up failed:', err instanceof Error ? err.message : err);
  process.exit(1);
});
