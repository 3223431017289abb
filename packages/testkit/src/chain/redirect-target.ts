/**
 * The internal service a hostile node redirects to, for the tests that a node's redirect is
 * never followed: an HTTP server on 127.0.0.1 that counts the requests it receives and answers
 * each as a JSON-RPC node would (so that a client that follows gets an answer it could believe).
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RedirectTarget {
  /** Where the node points (`http://127.0.0.1:<port>/`). */
  url: string;
  /** Requests received so far. */
  reached(): number;
  close(): Promise<void>;
}

export async function startRedirectTarget(): Promise<RedirectTarget> {
  let reached = 0;
  const server = createServer((_req, res) => {
    reached += 1;
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"jsonrpc":"2.0","id":1,"result":"0x2105"}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    reached: () => reached,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
