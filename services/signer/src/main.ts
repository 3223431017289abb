/**
 * Production entry point: `node services/signer/dist/main.js`. Loads the config (exit 1 with
 * a message naming the setting or chain, never a secret), starts the signer, and drains on
 * SIGTERM/SIGINT: in-flight requests complete, Redis is closed, the process exits 0.
 */
import { ConfigError, createLogger, shutdownOnSignals } from '@pmm/core';
import { loadSignerConfig } from './config';
import { startSigner } from './start-signer';

async function main(): Promise<void> {
  const config = loadSignerConfig();
  const logger = createLogger({ service: 'signer', level: config.logLevel });
  const signer = await startSigner(config, logger);
  shutdownOnSignals({ served: [signer.served], logger, cleanup: () => signer.close() });
}

main().catch((err: unknown) => {
  // ConfigError messages are written to be shown; anything else is reported by type only
  // (an unexpected exception text could quote a secret).
  const message =
    err instanceof ConfigError
      ? err.message
      : `unexpected start-up failure (${err instanceof Error ? err.name : typeof err})`;
  console.error(`signer: cannot start: ${message}`);
  process.exit(1);
});
