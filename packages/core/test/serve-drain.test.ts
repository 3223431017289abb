/**
 * listen()'s close() under keep-alive load: a client that sends its next request as soon as the
 * last is answered never leaves its connection idle, and close() waits for every connection to
 * end. Each request that starts during the drain gets `Connection: close`, so close() ends.
 */
import { Agent, request } from 'node:http';
import { listen, type Served } from '../src';

let served: Served | undefined;
const agent = new Agent({ keepAlive: true, maxSockets: 4 });

afterAll(async () => {
  agent.destroy();
  served?.server.closeAllConnections();
  await served?.close();
});

/** One GET on the shared keep-alive agent: its status and Connection header, or the error. */
function get(port: number): Promise<{ status?: number; connection?: string; error?: string }> {
  return new Promise((resolve) => {
    const req = request({ host: '127.0.0.1', port, path: '/', agent }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode, connection: res.headers.connection }));
    });
    req.on('error', (err) => resolve({ error: err.message }));
    req.end();
  });
}

it("behavior: close() ends while keep-alive clients keep sending (each request of the drain is its connection's last)", async () => {
  // A little work per request, so that requests are in flight when close() is called.
  served = await listen((_req, res) => setTimeout(() => res.end('ok'), 2), 0, '127.0.0.1');
  const port = served.port;
  let stopping = false;
  const answers: { status?: number; connection?: string; error?: string }[] = [];
  const client = async () => {
    while (!stopping) {
      const answer = await get(port);
      answers.push(answer);
      if (answer.error) return;
    }
  };
  const clients = Array.from({ length: 4 }, client);
  await new Promise((r) => setTimeout(r, 300));
  const before = answers.length;
  const closed = await Promise.race([
    served.close().then(() => true),
    new Promise<false>((r) => setTimeout(() => r(false), 5_000)),
  ]);
  stopping = true;
  await Promise.all(clients);
  expect(closed).toBe(true);
  // The load was kept alive until the drain; once closed, connecting is refused.
  expect(before).toBeGreaterThan(0);
  expect(answers.slice(0, before).every((a) => a.status === 200 && a.connection === 'keep-alive')).toBe(true);
  expect((await get(port)).error).toMatch(/ECONNREFUSED/);
});
