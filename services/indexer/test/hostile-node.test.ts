/**
 * A node that lags, lies or floods (docs/decisions/0034-a-node-that-lags-lies-or-floods.md): the
 * real indexer (main.ts in a child process, configured from the environment) follows a fake
 * JSON-RPC node, one replica over WebSocket (chain 8453, Multicall3) and one polling over HTTP
 * (chain 4663, JSON-RPC batches), both against a real Redis. The nodes send `null` and
 * malformed messages, answers far above any real one, redirects to an internal server, a flood
 * of heads, a head an hour old, heads stamped minutes in the future, a made-up block a million
 * blocks ahead, a reorg, and other decimals for a token (the HTTP replica has an honest second
 * node to confirm registry changes; the WebSocket one pins the token's decimals).
 *
 * Throughout, every book in Redis is checked every 50 ms: it must describe a block of the
 * honest chain, with that block's prices, not older than MAX_HEAD_LAG_MS nor stamped later than
 * MAX_HEAD_LEAD_MS ahead of the clock, and not a block
 * reorged away more than a moment ago; otherwise there must be no book (503). After every
 * case both processes are alive and a correct book is back; at the end their memory is
 * bounded and Redis holds no more block jobs than the chain had heads.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import Redis from 'ioredis';
import { Queue } from 'bullmq';
import { redisKeys } from '@pmm/core';
import { findChain, type OrderbookResponse } from '@pmm/protocol';
import {
  freePort,
  startRedirectTarget,
  stopProcess,
  until,
  HOSTILE_NODE_CONTRACTS as CONTRACTS,
  HOSTILE_NODE_TOKENS as TOKENS,
  startHostileNode,
  type FakeBlock,
  type HostileNode,
} from '@pmm/testkit';
import { spawnIndexer, type IndexerProcess } from './support/indexer-process';
import { REDIS_URL, deleteKeys, randomPrefix } from './support/redis';
import { readBook } from './support/stored-book';

jest.setTimeout(180_000);

const MAX_HEAD_LAG_MS = 4_000;
const MAX_HEAD_LEAD_MS = 3_000;
/** Slack of the freshness check: block timestamps are whole seconds, and the reads poll. */
const LAG_SLACK_MS = 1_500;
/** A book of a block reorged away may stay this long (the recomputation in flight). */
const REORG_GRACE_MS = 2_000;
const MAX_ANSWER_BYTES = 1_048_576;
const RSS_LIMIT_BYTES = 500 * 1_048_576;
const QUOTER_KEY = '0x' + '11'.repeat(32);

interface Replica {
  name: string;
  chainId: number;
  node: HostileNode;
  proc: IndexerProcess;
  metricsPort: number;
  bookKey: string;
}

const prefix = randomPrefix();
const keys = redisKeys(prefix);
let redis: Redis;
const replicas: Replica[] = [];
const violations: string[] = [];
let monitor: NodeJS.Timeout | undefined;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Why `book` is not a correct book of `node`'s chain now, or undefined when it is. */
function wrongness(book: OrderbookResponse, node: HostileNode, now: number): string | undefined {
  const candidates = [...node.blocks.values()].filter((b) => b.number === book.blockNumber && b.honest);
  if (candidates.length === 0) return `block ${book.blockNumber} is not a block of the chain`;
  if (now - book.blockTime * 1000 > MAX_HEAD_LAG_MS + LAG_SLACK_MS)
    return `block ${book.blockNumber} is ${Math.round((now - book.blockTime * 1000) / 1000)} s old`;
  if (book.blockTime * 1000 - now > MAX_HEAD_LEAD_MS)
    return `block ${book.blockNumber} is stamped ${Math.round((book.blockTime * 1000 - now) / 1000)} s in the future`;
  const pair = book.pairs[0];
  // A pair left out (decimals that disagree with the pinned ones) is a smaller book, not a wrong one.
  if (!pair) return undefined;
  const prices = [...pair.asks, ...pair.bids].map((l) => Number(l.price));
  const matches = (b: FakeBlock) => prices.length > 0 && prices.every((p) => Math.abs(p / b.price - 1) < 1e-6);
  const block = candidates.find(matches);
  if (!block) return `block ${book.blockNumber}: prices ${prices.slice(0, 2).join(', ')} are no block's`;
  const orphanedAt = node.orphaned.get(block);
  if (orphanedAt !== undefined && now - orphanedAt > REORG_GRACE_MS)
    return `block ${book.blockNumber} was reorged away ${now - orphanedAt} ms ago`;
  return undefined;
}

async function checkBooks(): Promise<void> {
  for (const r of replicas) {
    const book = await readBook(redis, r.bookKey);
    const wrong = book && wrongness(book, r.node, Date.now());
    if (wrong) violations.push(`${r.name}: ${wrong}`);
  }
}

/** A correct book at or above the node's head as of now. */
async function waitForCorrectBook(r: Replica, timeoutMs = 15_000): Promise<OrderbookResponse> {
  const from = r.node.head().number;
  return until(
    async () => {
      const book = await readBook(redis, r.bookKey);
      return book && book.blockNumber >= from && book.pairs.length > 0 && !wrongness(book, r.node, Date.now()) && book;
    },
    timeoutMs,
    `${r.name}: a correct book at block >= ${from}`,
    50,
  );
}

/** The sum of the replica's series `name` whose labels include `labels`. */
async function metric(r: Replica, name: string, labels: string): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${r.metricsPort}/metrics`)).text();
  return text
    .split('\n')
    .filter((l) => l.startsWith(name + '{') && l.includes(labels))
    .reduce((sum, l) => sum + Number(l.slice(l.lastIndexOf(' ') + 1)), 0);
}

function expectAlive(): void {
  for (const r of replicas) {
    const exited = r.proc.child.exitCode !== null || r.proc.child.signalCode !== null;
    if (exited) throw new Error(`${r.name} exited: ${JSON.stringify(r.proc.lines.slice(-5))}`);
  }
}

function rssBytes(r: Replica): number {
  const status = readFileSync(`/proc/${r.proc.child.pid}/status`, 'utf8');
  const kb = /VmRSS:\s+(\d+)/.exec(status)?.[1];
  return Number(kb) * 1024;
}

async function startReplica(name: string, chainId: number, transport: 'ws' | 'http'): Promise<Replica> {
  const multicall3 = findChain(chainId)?.contracts.multicall3;
  const node = await startHostileNode({ chainId, port: await freePort(), blockMs: 500, multicall3 });
  const metricsPort = await freePort();
  const deployment = {
    chainId,
    ...(transport === 'ws' ? { wsUrl: node.wsUrl } : { rpcUrl: node.httpUrl }),
    contracts: CONTRACTS,
    // The WebSocket replica's operator pins the base token's decimals; the HTTP one has a second node.
    ...(transport === 'ws'
      ? { pinnedDecimals: { [TOKENS.base.address]: TOKENS.base.decimals } }
      : { confirmRpcUrl: `${node.httpUrl}/confirm` }),
  };
  const proc = spawnIndexer({
    CHAIN_ID: String(chainId),
    CHAINS: JSON.stringify({ [chainId]: deployment }),
    QUOTER_KEY,
    REDIS_URL,
    REDIS_KEY_PREFIX: prefix,
    BOOK_TTL_MS: '4000',
    MAX_HEAD_LAG_MS: String(MAX_HEAD_LAG_MS),
    MAX_HEAD_LEAD_MS: String(MAX_HEAD_LEAD_MS),
    MAX_RPC_ANSWER_BYTES: String(MAX_ANSWER_BYTES),
    HEARTBEAT_MS: '500',
    RPC_TIMEOUT_MS: '1500',
    POLL_INTERVAL_MS: '250',
    RECONNECT_MIN_MS: '100',
    RECONNECT_MAX_MS: '500',
    REGISTRY_REFRESH_MS: '1000',
    JOB_LOCK_MS: '1500',
    PORT: String(metricsPort),
    LOG_LEVEL: 'warn',
  });
  const replica = { name, chainId, node, proc, metricsPort, bookKey: keys.book(chainId) };
  replicas.push(replica);
  return replica;
}

let ws: Replica;
let http: Replica;

beforeAll(async () => {
  redis = new Redis(REDIS_URL);
  ws = await startReplica('websocket replica', 8453, 'ws');
  http = await startReplica('http replica', 4663, 'http');
  await Promise.all([waitForCorrectBook(ws, 60_000), waitForCorrectBook(http, 60_000)]);
  monitor = setInterval(() => void checkBooks().catch(() => undefined), 50);
});

afterAll(async () => {
  if (monitor) clearInterval(monitor);
  await Promise.all(replicas.map((r) => stopProcess(r.proc.child, 'SIGKILL')));
  await Promise.all(replicas.map((r) => r.node.close()));
  if (redis) {
    await deleteKeys(redis, prefix);
    redis.disconnect();
  }
});

afterEach(async () => {
  expectAlive();
  await Promise.all([waitForCorrectBook(ws), waitForCorrectBook(http)]);
  expectAlive();
  expect(violations).toEqual([]);
});

it('error: null, wrong-shape and undecodable messages are dropped and counted; the process lives', async () => {
  for (const text of ['null', '[null]', '42', '"x"', '[]', '{}', 'not json', '[{"method":"eth_subscription"}]'])
    ws.node.sendRaw(text);
  ws.node.sendRaw(
    JSON.stringify({
      jsonrpc: '2.0',
      method: 'eth_subscription',
      params: { subscription: '0x5ub', result: { number: '0x99999', hash: '0x12', timestamp: '0x1' } },
    }),
  );
  for (const raw of ['null', '[null]', '{"jsonrpc":"2.0","id":1}', 'not json', '[1,2,3]']) {
    http.node.rawAnswer = raw;
    ws.node.rawAnswer = raw;
    await sleep(600);
  }
  http.node.rawAnswer = undefined;
  ws.node.rawAnswer = undefined;
  await sleep(500);
  expectAlive();
  expect(await metric(ws, 'indexer_node_messages_dropped_total', 'reason="malformed"')).toBeGreaterThan(0);
  expect(await metric(http, 'indexer_node_messages_dropped_total', 'reason="malformed"')).toBeGreaterThan(0);
});

it('error: an answer above MAX_RPC_ANSWER_BYTES is refused unread, on both transports', async () => {
  const junk = JSON.stringify({
    jsonrpc: '2.0',
    method: 'eth_subscription',
    params: { subscription: '0x5ub', result: 'x'.repeat(16 * MAX_ANSWER_BYTES) },
  });
  const dropped = async (r: Replica) => metric(r, 'indexer_node_messages_dropped_total', 'reason="oversized"');
  http.node.rawAnswer = junk;
  // Sent again until one is counted: the replica may be between two WebSocket connections (the
  // malformed answers of the test before close it), and a message sent then reaches no one.
  await until(
    async () => {
      ws.node.sendRaw(junk);
      return (await dropped(ws)) > 0;
    },
    15_000,
    'an oversized WebSocket message counted as dropped',
    1_000,
  );
  await until(async () => (await dropped(http)) > 0, 15_000, 'an oversized HTTP answer counted as dropped', 200);
  http.node.rawAnswer = undefined;
  expectAlive();
});

it('security: a node answering 307 is not followed: the redirect target receives nothing, each answer is counted', async () => {
  // An internal service the node points at: it must never see the indexer's requests.
  const internal = await startRedirectTarget();
  const redirected = () => metric(http, 'indexer_node_messages_dropped_total', 'reason="redirect"');
  try {
    http.node.redirectTo = internal.url;
    await until(async () => (await redirected()) >= 3, 15_000, 'three redirects counted as dropped', 200);
  } finally {
    http.node.redirectTo = undefined;
    await internal.close();
  }
  expect(internal.reached()).toBe(0);
  expectAlive();
});

it('error: a flood of heads makes no more jobs than the chain has heads, at most one waiting per height', async () => {
  const head = ws.node.head();
  const header = (n: number, salt: number) => ({
    number: '0x' + n.toString(16),
    hash: '0x' + createHash('sha256').update(`flood:${n}:${salt}`).digest('hex'),
    timestamp: '0x' + head.timestamp.toString(16),
  });
  const notification = (result: unknown) => ({
    jsonrpc: '2.0',
    method: 'eth_subscription',
    params: { subscription: '0x5ub', result },
  });
  // 20,000 notifications in one message (no node batches notifications)...
  ws.node.sendRaw(
    JSON.stringify(Array.from({ length: 20_000 }, (_, i) => notification(header(head.number + 1 + (i % 50), i)))),
  );
  // ...and 3,000 messages, each another hash at the same height.
  for (let i = 0; i < 3_000; i++) ws.node.sendRaw(JSON.stringify(notification(header(head.number, i + 1))));
  await sleep(2_000);
  expectAlive();
  const connection = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
  const queue = new Queue('blocks', { connection, prefix: keys.queuePrefix(ws.chainId) });
  try {
    const counts = await queue.getJobCounts();
    const jobs = Object.values(counts).reduce((a, b) => a + b, 0);
    // Heights the honest chain has had since the replica started (block 1000), each of which
    // may have had one reorged job besides its own.
    const heads = ws.node.head().number - 1000 + 1;
    expect(jobs).toBeLessThanOrEqual(2 * heads + 10);
    expect(counts.wait ?? 0).toBeLessThanOrEqual(10);
  } finally {
    await queue.close();
    connection.disconnect();
  }
});

it('behavior: a node that lags is not served as live: the book goes (503) and comes back with the node', async () => {
  for (const r of replicas) r.node.lagSeconds = 3_600;
  await sleep(MAX_HEAD_LAG_MS + 2_000);
  for (const r of replicas) expect(await readBook(redis, r.bookKey)).toBeUndefined();
  expect(await metric(ws, 'indexer_head_lag_seconds', '')).toBeGreaterThan(3_000);
  expect(await metric(http, 'indexer_heads_refused_total', 'reason="lagging"')).toBeGreaterThan(0);
  for (const r of replicas) r.node.lagSeconds = 0;
});

it('behavior: a node that stamps heads minutes in the future is not believed: no book of them, counted, the lead measured', async () => {
  for (const r of replicas) r.node.lagSeconds = -300;
  // The last honest book expires (the monitor fails the test on any book of a future head).
  await sleep(MAX_HEAD_LAG_MS + 2_000);
  for (const r of replicas) expect(await readBook(redis, r.bookKey)).toBeUndefined();
  for (const r of replicas) {
    expect(await metric(r, 'indexer_heads_refused_total', 'reason="ahead"')).toBeGreaterThan(0);
    expect(await metric(r, 'indexer_head_lead_seconds', '')).toBeGreaterThan(250);
    expect(await metric(r, 'indexer_max_head_lead_seconds', '')).toBe(MAX_HEAD_LEAD_MS / 1000);
  }
  for (const r of replicas) r.node.lagSeconds = 0;
});

it('behavior: a head a million blocks ahead is not written until the chain confirms it; the honest chain goes on', async () => {
  await Promise.all([ws.node.jump(1_000_000, 1_500), http.node.jump(1_000_000, 1_500)]);
  expect(await metric(ws, 'indexer_heads_refused_total', 'reason="jump"')).toBeGreaterThan(0);
  expect(await metric(http, 'indexer_heads_refused_total', 'reason="jump"')).toBeGreaterThan(0);
});

it('behavior: a new hash at a known height recomputes that block, with calls pinned to the hash (EIP-1898)', async () => {
  for (const r of replicas) r.node.mining = false;
  await Promise.all(replicas.map((r) => waitForCorrectBook(r)));
  const reorged = replicas.map((r) => r.node.reorgHead());
  // The book of the same height comes back with the new block's state (the monitor allows the
  // orphaned one for REORG_GRACE_MS only).
  await Promise.all(
    replicas.map((r, i) =>
      until(
        async () => {
          const book = await readBook(redis, r.bookKey);
          const price = Number(book?.pairs[0]?.asks[0]?.price);
          return book?.blockNumber === reorged[i]!.number && Math.abs(price / reorged[i]!.price - 1) < 1e-6;
        },
        REORG_GRACE_MS + 1_000,
        `${r.name}: the book of the reorged block`,
        50,
      ),
    ),
  );
  for (const r of replicas) r.node.mining = true;
  for (const r of replicas) {
    const pinned = r.node.callBlockParams.slice(-20);
    expect(pinned.every((p) => typeof p === 'object' && p !== null && 'blockHash' in p)).toBe(true);
  }
});

it('behavior: decimals that change are believed only when a second read agrees; pinned decimals are never overridden', async () => {
  // A node that lies every time, against a second node that does not: refused at every refresh.
  http.node.lieDecimals(6, Infinity);
  // A node that lies every time, read twice alike (no second node), against pinned decimals:
  // the pair is left out (a listing change, accepted), never rescaled.
  ws.node.lieDecimals(6, Infinity);
  try {
    await until(
      async () => (await metric(http, 'indexer_registry_changes_total', 'result="refused"')) >= 2,
      10_000,
      'registry changes refused twice',
    );
    await until(
      async () => (await readBook(redis, ws.bookKey))?.pairs.length === 0,
      10_000,
      'the pair left out of the websocket replica book',
    );
    expect(await metric(ws, 'indexer_registry_changes_total', 'kind="listing",result="accepted"')).toBeGreaterThan(0);
    // The HTTP replica kept its pair (the monitor has checked its prices all along).
    const httpBook = await readBook(redis, http.bookKey);
    if (httpBook) expect(httpBook.pairs).toHaveLength(1);
  } finally {
    http.node.lieDecimals(6, 0);
    ws.node.lieDecimals(6, 0);
  }
});

it('behavior: after all of it, both processes are alive with bounded memory', () => {
  expectAlive();
  for (const r of replicas) expect(rssBytes(r)).toBeLessThan(RSS_LIMIT_BYTES);
});
