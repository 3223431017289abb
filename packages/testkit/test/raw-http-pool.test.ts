/**
 * The load's keep-alive pool reuses a connection only while the server still keeps it: a request
 * written to a connection the server is closing at that moment is lost unanswered.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { RawHttpPool } from '../src/load/raw-http-pool';

let server: Server;
/** Every connection the server accepted, with when it closed (performance.now()). */
const connections: { socket: Socket; closedAt?: number }[] = [];
let url: string;

beforeAll(async () => {
  server = createServer((req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(200, { 'content-type': 'text/plain', 'content-length': '2' }).end('ok'));
  });
  // Node's server advertises `Keep-Alive: timeout=3`: reusable for 3 s less the 2 s threshold.
  server.keepAliveTimeout = 3_000;
  server.on('connection', (socket: Socket) => {
    const entry: { socket: Socket; closedAt?: number } = { socket };
    connections.push(entry);
    socket.on('close', () => (entry.closedAt = performance.now()));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
});

afterAll(() => new Promise<void>((done) => server.close(() => done())));

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

it("behavior: a connection is reused within the server's keep-alive less the threshold, and closed by the client past it", async () => {
  const pool = new RawHttpPool(url, 4);
  const post = () => pool.post('/', {}, '{}');
  expect((await post()).status).toBe(200);
  await sleep(200);
  expect((await post()).status).toBe(200);
  expect(connections.length).toBe(1);

  await sleep(1_300);
  const sentAt = performance.now();
  expect((await post()).status).toBe(200);
  expect(connections.length).toBe(2);
  // The stale one was closed by the client when the request came, long before the server's 3 s.
  await sleep(50);
  expect(connections[0]!.closedAt).toBeDefined();
  expect(connections[0]!.closedAt! - sentAt).toBeLessThan(1_000);
  pool.destroy();
});
