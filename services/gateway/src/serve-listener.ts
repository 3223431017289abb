/**
 * core's `listen` for a plain request listener (the gateway serves its fast path in front of
 * Express, so its public handler is not an Express app): same `Served` shape, same drain.
 */
import { createServer, type RequestListener } from 'node:http';
import type { Served } from '@pmm/core';

export function listenHandler(handler: RequestListener, port: number, host: string): Promise<Served> {
  return new Promise((resolve, reject) => {
    const server = createServer(handler);
    server.once('error', reject);
    server.listen(port, host, () => {
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
