/**
 * The WebSocket transport against a real `ws` server: a message above MAX_RPC_ANSWER_BYTES
 * closes the connection, counted as dropped, with a reason that names the setting (what an
 * operator sees in the log when a growing pair list outgrows it); and a request, sent with the
 * zero masking key, reaches a standard server whole and gets its answer.
 */
import { WebSocketServer, type WebSocket } from 'ws';
import { until } from '@pmm/testkit';
import { openWsTransport } from '../../src/chain/ws-transport';

const MAX = 65_536;
let server: WebSocketServer;
let url: string;
let lastClient: WebSocket | undefined;
const received: string[] = [];

beforeAll(async () => {
  server = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  await new Promise<void>((resolve) => server.once('listening', () => resolve()));
  url = `ws://127.0.0.1:${(server.address() as { port: number }).port}`;
  server.on('connection', (client) => {
    lastClient = client;
    client.on('message', (data) => received.push(String(data)));
  });
});

afterAll(async () => {
  for (const client of server.clients) client.terminate();
  await new Promise((resolve) => server.close(resolve));
});

it('error: a node message above MAX_RPC_ANSWER_BYTES closes the connection, counted, with a reason that names the setting', async () => {
  const dropped: string[] = [];
  const transport = await openWsTransport(url, 2_000, { maxAnswerBytes: MAX, onDropped: (r) => dropped.push(r) });
  lastClient!.send(JSON.stringify({ jsonrpc: '2.0', method: 'eth_subscription', params: { result: 'x'.repeat(MAX) } }));
  const reason = await transport.closed;
  expect(reason.message).toBe(
    `websocket: a node message above MAX_RPC_ANSWER_BYTES (${MAX} bytes) was refused; a block call's answer grows with pairs × ladder points`,
  );
  expect(dropped).toEqual(['oversized']);
});

it('behavior: a request reaches a standard WebSocket server whole and its answer settles it', async () => {
  const transport = await openWsTransport(url, 2_000, { maxAnswerBytes: MAX, onDropped: () => undefined });
  const answered = transport.subscribe(['newHeads'], () => undefined, 2_000);
  const sent = await until(() => received.find((m) => m.includes('eth_subscribe')), 2_000, 'the subscribe request');
  const request = JSON.parse(sent) as { id: number; method: string; params: unknown[] };
  expect([request.method, request.params]).toEqual(['eth_subscribe', ['newHeads']]);
  lastClient!.send(JSON.stringify({ jsonrpc: '2.0', id: request.id, result: '0xabc' }));
  await expect(answered).resolves.toBe('0xabc');
  lastClient!.close();
  await transport.closed;
});
