/**
 * A JSON-RPC relay in front of a real node, for tests of how a client copes with a node that
 * fails: each request (batches too) is passed through, answered with a JSON-RPC error (as a node
 * without that method does), or makes the whole HTTP exchange a 503 (as an overloaded node or its
 * balancer does). What happens to a request is the test's `fault` function.
 */
import http from 'node:http';

export interface JsonRpcRequest {
  id: unknown;
  method: string;
  params?: unknown[];
}

/** What the relay does with one request. */
export type JsonRpcFault = 'pass' | 'unavailable' | { code: number; message: string };

export interface JsonRpcRelay {
  readonly url: string;
  close(): Promise<void>;
}

export async function jsonRpcRelay(target: string, fault: (r: JsonRpcRequest) => JsonRpcFault): Promise<JsonRpcRelay> {
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (b: Buffer) => chunks.push(b));
    req.on('end', () => {
      void (async () => {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as JsonRpcRequest | JsonRpcRequest[];
        const list = Array.isArray(body) ? body : [body];
        const faults = list.map(fault);
        if (faults.includes('unavailable')) {
          res.statusCode = 503;
          res.end('Service Unavailable');
          return;
        }
        const passed = list.filter((_, i) => faults[i] === 'pass');
        const answers = passed.length
          ? ((await (
              await fetch(target, {
                method: 'POST',
                headers: { 'content-type': 'application/json' },
                body: JSON.stringify(passed),
              })
            ).json()) as { id: unknown }[])
          : [];
        const out = list.map((r, i) => {
          const f = faults[i]!;
          return f === 'pass' ? answers.find((a) => a.id === r.id) : { jsonrpc: '2.0', id: r.id, error: f };
        });
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify(Array.isArray(body) ? out : out[0]));
      })();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((r) => {
        // Keep-alive sockets of the client under test would hold close() open.
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
