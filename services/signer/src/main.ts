/**
 * Production entry point: `node services/signer/dist/main.js`. Loads the config, sizes libuv's
 * thread pool for the keys' module sessions, starts the signer, and drains on SIGTERM/SIGINT:
 * in-flight requests complete, Redis is closed, the process exits 0 (start-up, errors and exit
 * codes: core's runService).
 */
import { runService, sizeThreadPool } from '@pmm/core';
import { SIGNER_SETTINGS, loadSignerConfig } from './config';
import { startSigner } from './start-signer';

void runService({
  name: 'signer',
  settings: SIGNER_SETTINGS,
  loadConfig: loadSignerConfig,
  start: async (config, logger) => {
    // Before anything uses libuv's pool (the keys' signs run on it): a thread per module session,
    // signing and quoter keys alike.
    const moduleKeys = Object.values(config.chains).reduce(
      (n, chain) => n + (chain.key.kind === 'pkcs11' ? 1 : 0) + (chain.quoter?.kind === 'pkcs11' ? 1 : 0),
      0,
    );
    const threads = sizeThreadPool(moduleKeys * config.pkcs11Sessions);
    if (moduleKeys > 0) logger.info('thread pool sized for the PKCS#11 sessions', { threads });
    const signer = await startSigner(config, logger);
    return { served: [signer.served], close: () => signer.close() };
  },
});
