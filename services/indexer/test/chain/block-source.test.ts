/**
 * The block source against a scripted WebSocket JSON-RPC node (ws server): heads from
 * newHeads, a handshake that fails without crashing the process, a silent node detected by
 * the heartbeat and replaced by a NEW connection, a wrong chain refused, close() ends it all.
 */
import { WebSocketServer, type WebSocket } from 'ws';
import { createLogger } from '@pmm/core';
import { startBlockSource, type BlockHead, type BlockSource } from '../../src/chain/block-source';
import { freePort, until } from '@pmm/testkit';

interface FakeNode {
  server: WebSocketServer;
  connections: WebSocket[];
  /** When true, the node stops answering (a hung node). */
  silent: boolean;
  chainId: number;
  head: number;
  pushHead(n: number): void;
  close(): Promise<void>;
}

const hex = (n: number) => '0x' + n.toString(16);
const header = (n: number) => ({
  number: hex(n),
  timestamp: hex(1_700_000_000 + n),
  hash: '0x' + n.toString(16).padStart(64, '0'),
});

function fakeNode(port: number): Promise<FakeNode> {
  return new Promise((resolve) => {
    const server = new WebSocketServer({ port, host: '127.0.0.1' });
    const node: FakeNode = {
      server,
      connections: [],
      silent: false,
      chainId: 8453,
      head: 5,
      pushHead(n) {
        node.head = n;
        for (const ws of node.connections) {
          if (ws.readyState === ws.OPEN)
            ws.send(
              JSON.stringify({
                jsonrpc: '2.0',
                method: 'eth_subscription',
                params: { subscription: '0xsub', result: header(n) },
              }),
            );
        }
      },
      close: () =>
        new Promise<void>((done) => {
          for (const ws of node.connections) ws.terminate();
          server.close(() => done());
        }),
    };
    server.on('connection', (ws) => {
      node.connections.push(ws);
      ws.on('message', (raw) => {
        if (node.silent) return;
        const req = JSON.parse(raw.toString()) as { id: number; method: string };
        const result =
          req.method === 'eth_chainId'
            ? hex(node.chainId)
            : req.method === 'eth_subscribe'
              ? '0xsub'
              : req.method === 'eth_blockNumber'
                ? hex(node.head)
                : req.method === 'eth_getBlockByNumber'
                  ? header(node.head)
                  : null;
        ws.send(JSON.stringify({ jsonrpc: '2.0', id: req.id, result }));
      });
    });
    server.on('listening', () => resolve(node));
  });
}

const logger = createLogger({ service: 'test', silent: true });
let source: BlockSource | undefined;
let node: FakeNode | undefined;

afterEach(async () => {
  await source?.close();
  await node?.close();
  source = undefined;
  node = undefined;
});

function start(port: number, heads: BlockHead[], states: string[], reconnects?: { n: number }) {
  return startBlockSource({
    chainId: 8453,
    wsUrl: `ws://127.0.0.1:${port}`,
    timeoutMs: 300,
    heartbeatMs: 150,
    pollIntervalMs: 100,
    backoff: { minMs: 50, maxMs: 200 },
    limits: { maxAnswerBytes: 1_048_576, onDropped: () => undefined },
    logger,
    admit: () => true,
    onHead: (h) => heads.push(h),
    onState: (s) => states.push(s),
    onReconnect: () => reconnects && reconnects.n++,
  });
}

it('behavior: reports the current head on connect, then each newHeads header, once each', async () => {
  const port = await freePort();
  node = await fakeNode(port);
  const heads: BlockHead[] = [];
  const states: string[] = [];
  source = start(port, heads, states);
  await until(() => heads.length > 0, 3_000, 'the first head');
  node.pushHead(6);
  node.pushHead(6);
  node.pushHead(7);
  await until(() => heads.some((h) => h.number === 7), 3_000, 'head 7');
  expect(heads.map((h) => h.number)).toEqual([5, 6, 7]);
  expect(heads[2]).toMatchObject({ timestamp: 1_700_000_007 });
  expect(states).toEqual(['up']);
  expect(source.isUp()).toBe(true);
  expect(await source.rpc.request('eth_blockNumber', [], 1_000)).toBe('0x7');
});

it('behavior: a refused handshake does not crash the process; the source connects once the node appears', async () => {
  const port = await freePort();
  const heads: BlockHead[] = [];
  const states: string[] = [];
  const reconnects = { n: 0 };
  source = start(port, heads, states, reconnects);
  await until(() => reconnects.n >= 2, 3_000, 'a few failed attempts');
  expect(source.isUp()).toBe(false);
  await expect(source.rpc.request('eth_blockNumber', [], 100)).rejects.toThrow(/down/);
  node = await fakeNode(port);
  await until(() => source!.isUp(), 3_000, 'the connection');
  await until(() => heads.length > 0, 3_000, 'a head');
});

it('behavior: a node that stops answering is detected by the heartbeat and replaced by a new connection', async () => {
  const port = await freePort();
  node = await fakeNode(port);
  const heads: BlockHead[] = [];
  const states: string[] = [];
  source = start(port, heads, states);
  await until(() => source!.isUp(), 3_000, 'up');
  const first = node.connections[0]!;
  node.silent = true;
  await until(() => states.includes('down'), 3_000, 'down');
  node.silent = false;
  await until(() => states.length >= 3, 3_000, 'up again');
  expect(states).toEqual(['up', 'down', 'up']);
  // A new socket, the old one closed by the indexer.
  expect(node.connections.length).toBeGreaterThanOrEqual(2);
  await until(() => first.readyState === first.CLOSED, 2_000, 'the old socket to close');
});

it('error: a node serving another chain is refused', async () => {
  const port = await freePort();
  node = await fakeNode(port);
  node.chainId = 56;
  const heads: BlockHead[] = [];
  const states: string[] = [];
  source = start(port, heads, states);
  await new Promise((r) => setTimeout(r, 600));
  expect(source.isUp()).toBe(false);
  expect(heads).toEqual([]);
});

it('behavior: close() stops reconnecting and closes the socket', async () => {
  const port = await freePort();
  node = await fakeNode(port);
  const heads: BlockHead[] = [];
  const states: string[] = [];
  const reconnects = { n: 0 };
  source = start(port, heads, states, reconnects);
  await until(() => source!.isUp(), 3_000, 'up');
  await source.close();
  const ws = node.connections[0]!;
  await until(() => ws.readyState === ws.CLOSED, 2_000, 'socket closed');
  const before = reconnects.n;
  await new Promise((r) => setTimeout(r, 400));
  expect(reconnects.n).toBe(before);
});
