/**
 * Production entry point: `node services/signer/dist/main.js`. Loads the config, starts the
 * signer, and drains on SIGTERM/SIGINT: in-flight requests complete, Redis is closed, the process
 * exits 0 (start-up, errors and exit codes: core's runService).
 */
import { runService } from '@pmm/core';
import { SIGNER_SETTINGS, loadSignerConfig } from './config';
import { startSigner } from './start-signer';

void runService({
  name: 'signer',
  settings: SIGNER_SETTINGS,
  loadConfig: loadSignerConfig,
  start: async (config, logger) => {
    const signer = await startSigner(config, logger);
    return { served: [signer.served], close: () => signer.close() };
  },
});
