import { createServer } from 'node:net';

/**
 * A TCP port that was free on 127.0.0.1 a moment ago (the OS picks it). Another process could
 * take it before the node binds; the node then fails to start and the error says so.
 */
export function findFreePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => (port > 0 ? resolve(port) : reject(new Error('could not get a free port'))));
    });
  });
}

/** Resolves if `port` can be bound on 127.0.0.1 right now, rejects naming the port otherwise. */
export function assertPortFree(port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', (err: NodeJS.ErrnoException) =>
      reject(new Error(`port ${port} on 127.0.0.1 is not available (${err.code ?? err.message})`)),
    );
    server.listen(port, '127.0.0.1', () => server.close(() => resolve()));
  });
}
