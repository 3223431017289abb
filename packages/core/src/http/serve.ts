/**
 * Starts an HTTP server and drains it on SIGTERM/SIGINT: stop accepting, let in-flight
 * requests finish (up to `drainTimeoutMs`), close the app's resources, exit.
 */
import { createServer, type RequestListener, type Server } from 'node:http';
import type { Logger } from '../logger';

export interface Served {
  server: Server;
  port: number;
  /** Drains and closes; idempotent. */
  close(): Promise<void>;
}

/**
 * Serves `handler` (an Express app, or a plain node:http listener on hot paths) on
 * `port`/`host` (port 0: any free port) and resolves once bound. Errors after binding are
 * passed to `onError` (default: ignored, the server keeps serving).
 */
export function listen(
  handler: RequestListener,
  port: number,
  host: string,
  onError: (err: Error) => void = () => undefined,
): Promise<Served> {
  return new Promise((resolve, reject) => {
    const server = createServer(handler);
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      server.on('error', onError);
      const address = server.address();
      let closing: Promise<void> | undefined;
      resolve({
        server,
        port: typeof address === 'object' && address ? address.port : port,
        close: () =>
          (closing ??= new Promise<void>((done) => {
            server.close(() => done());
            server.closeIdleConnections();
          })),
      });
    });
  });
}

/**
 * Installs the signal handlers of a service's main: on the first SIGTERM/SIGINT, drain the
 * server, then run `cleanup` (close Redis, workers, providers), then exit 0; a second signal
 * or the drain timeout forces the exit.
 */
export function shutdownOnSignals(opts: {
  served: Served[];
  cleanup: () => Promise<void>;
  logger: Logger;
  drainTimeoutMs?: number;
}): void {
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) process.exit(1);
    stopping = true;
    opts.logger.info('shutting down', { signal });
    const force = setTimeout(() => {
      opts.logger.warn('drain timeout: closing open connections');
      for (const s of opts.served) s.server.closeAllConnections();
    }, opts.drainTimeoutMs ?? 10_000);
    force.unref();
    try {
      await Promise.all(opts.served.map((s) => s.close()));
      await opts.cleanup();
    } catch (err) {
      opts.logger.error('shutdown error', { error: err });
    }
    opts.logger.info('stopped');
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
}
