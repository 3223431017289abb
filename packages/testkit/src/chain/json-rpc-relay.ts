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

/** A node without tracing: every debug_* and trace_* method is unknown (-32601), as geth says it. */
export const withoutTracing = (r: JsonRpcRequest): JsonRpcFault =>
  /^(debug|trace)_/.test(r.method)
    ? { code: -32601, message: `the method ${r.method} does not exist/is not available` }
    : 'pass';

export async function jsonRpcRelay(target: string, fault: (r: JsonRpcRequest) => JsonRpcFault): Promise<JsonRpcRelay> {
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (b: Buffer) => chunks.push(b));
    req.on('end', () => {
      relay(Buffer.concat(chunks).toString('utf8')).then(
        (answer) => {
          if (answer === undefined) {
            res.statusCode = 503;
            res.end('Service Unavailable');
            return;
          }
          res.setHeader('content-type', 'application/json');
          res.end(answer);
        },
        // A body that is not JSON-RPC, or a node that cannot be reached: a clear failure for the
        // client under test, never a request left without an answer.
        (err: Error) => {
          res.statusCode = 502;
          res.end(`relay: ${err.message}`);
        },
      );
    });
  });

  /** The JSON answer to one HTTP body, or undefined for a 503 (a request the test made 'unavailable'). */
  async function relay(text: string): Promise<string | undefined> {
    const body = JSON.parse(text) as JsonRpcRequest | JsonRpcRequest[];
    const list = Array.isArray(body) ? body : [body];
    const faults = list.map(fault);
    if (faults.includes('unavailable')) return undefined;
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
    return JSON.stringify(Array.isArray(body) ? out : out[0]);
  }

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
