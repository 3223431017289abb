/**
 * The drills' load counts every request once, whatever the server does with it: a drill that
 * requires "only 200 and 503" must see an answer cut after its head, not lose it.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pacedSigns } from '../src/load/sign-load';

let server: Server;

afterAll(() => new Promise<void>((done) => server.close(() => done())));

it('error: answers cut after their head, and connections reset unanswered, each count once as error', async () => {
  let n = 0;
  server = createServer((req, res) => {
    req.resume();
    const kind = n++ % 3;
    if (kind === 0) return void res.writeHead(503, { 'content-type': 'application/json' }).end('{"error":{}}');
    if (kind === 1) {
      // The head and part of a body, then the connection goes.
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '1000' });
      res.write('{"verificationData":"0x');
      return void setTimeout(() => res.socket?.destroy(), 5);
    }
    res.socket?.destroy();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const { port } = server.address() as AddressInfo;
  const load = pacedSigns({ url: `http://127.0.0.1:${port}/`, perSecond: 200, headers: {}, body: () => '{}' });
  await new Promise((r) => setTimeout(r, 500));
  const result = await load.stop();
  const counted = Object.values(result.statuses).reduce((a, b) => a + b, 0);
  expect(counted).toBe(result.sent);
  expect(result.ok).toEqual([]);
  expect(result.statuses['503']).toBeGreaterThan(0);
  // The cut and the reset ones: two of every three.
  expect(result.statuses.error).toBe(result.sent - result.statuses['503']!);
  // Each by its cause: the connection reset before any answer, or cut in the middle of one (with
  // the socket's error code when it had one: a reset may come as ECONNRESET).
  const kinds = Object.keys(result.errors).map(
    (cause) => /^connection closed (in the middle of an answer|with no answer)/.exec(cause)?.[1],
  );
  expect(new Set(kinds)).toEqual(new Set(['in the middle of an answer', 'with no answer']));
  expect(Object.values(result.errors).reduce((a, b) => a + b, 0)).toBe(result.statuses.error);
});
