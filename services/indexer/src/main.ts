/**
 * Production entry point: `node services/indexer/dist/main.js` (one process per chain; run
 * several with the same CHAIN_ID for HA). Loads and validates the config, sizes libuv's thread
 * pool for a quoter key's module sessions, starts the indexer,
 * and on SIGTERM/SIGINT closes the worker, the queue, the node connection and Redis
 * (start-up, errors and exit codes: core's runService).
 */
import { DEFAULT_PKCS11_SESSIONS, runService, sizeThreadPool } from '@pmm/core';
import { INDEXER_SETTINGS, loadIndexerConfig } from './config';
import { startIndexer } from './indexer';

void runService({
  name: 'indexer',
  settings: INDEXER_SETTINGS,
  loadConfig: loadIndexerConfig,
  start: async (config, logger) => {
    // Before anything uses libuv's pool (the quoter key's signs run on it): a thread per module session.
    if (config.quoter.kind === 'pkcs11') {
      logger.info('thread pool sized for the PKCS#11 sessions', { threads: sizeThreadPool(DEFAULT_PKCS11_SESSIONS) });
    }
    const indexer = await startIndexer(config, { logger });
    return { served: [indexer.served], close: indexer.stop };
  },
});
