/**
 * Production entry point: `node services/indexer/dist/main.js` (one process per chain; run
 * several with the same CHAIN_ID for HA). Loads and validates the config, starts the indexer,
 * and on SIGTERM/SIGINT closes the worker, the queue, the node connection and Redis
 * (start-up, errors and exit codes: core's runService).
 */
import { runService } from '@pmm/core';
import { INDEXER_SETTINGS, loadIndexerConfig } from './config';
import { startIndexer } from './indexer';

void runService({
  name: 'indexer',
  settings: INDEXER_SETTINGS,
  loadConfig: loadIndexerConfig,
  start: async (config, logger) => {
    const indexer = await startIndexer(config, { logger });
    return { served: [indexer.served], close: indexer.stop };
  },
});
