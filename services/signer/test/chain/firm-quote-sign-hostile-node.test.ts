/**
 * A sign with `amountIn` while the chain's node misbehaves, end to end through the real signer
 * (startSigner from its loaded config, support/firm-signer.ts: CHAINS names the fake node of the
 * hostile-node tests, QUOTER_KEY_8453, FIRM_QUOTE_DEADLINE_MS) over HTTP, with a real Redis holding the served book's
 * head: a node that stalls, answers garbage, lags the book (does not have its block) or lags the
 * clock (the indexer's head-lag rule expired the book) gives `503 SERVICE_UNAVAILABLE` in the
 * envelope, with Retry-After, within the deadline (plus the HTTP hop), and nothing is signed or
 * recorded; a sign without `amountIn` is answered meanwhile.
 * The firm quote's own outcomes are tested in firm-quotes.test.ts; this is the sign path around it.
 */
import { randomBytes } from 'node:crypto';
import { bookHashKey, closeRedis, createRedis, redisKeys, redisReady, type RedisClient } from '@pmm/core';
import {
  HOSTILE_NODE_CONTRACTS,
  HOSTILE_NODE_TOKENS,
  freePort,
  startHostileNode,
  type HostileNode,
} from '@pmm/testkit';
import { findChain } from '@pmm/protocol';
import type { RunningSigner } from '../../src';
import { INTERNAL_TOKEN, REDIS_URL, USER, integrator, testKey } from '../support/fixture';
import { startFirmSigner } from '../support/firm-signer';

const CHAIN = 8453;
/** Room for an honest quote on a loaded machine; the stalls below are far longer. */
const DEADLINE_MS = 1_000;
const STALL_MS = 15_000;
/** What the answer may take beyond the deadline: the HTTP hop and the event loop of a loaded machine. */
const HOP_MS = 1_500;
const { quote: QUOTE, base: BASE } = HOSTILE_NODE_TOKENS;
const prefix = `pmm-firm-hostile-${randomBytes(4).toString('hex')}`;
const keys = redisKeys(prefix);

let node: HostileNode;
let redis: RedisClient;
let signer: RunningSigner;

/** Writes the served book's head as the indexer does: the body's leading members and the hash key. */
async function serveBook(block: { number: number; hash: string; timestamp: number }): Promise<void> {
  const book = keys.book(CHAIN);
  const body = JSON.stringify({ chainId: CHAIN, blockNumber: block.number, blockTime: block.timestamp, pairs: [] });
  await redis.mset(book, body, bookHashKey(book), block.hash);
}

interface Answer {
  status: number;
  ms: number;
  retryAfter: string | null;
  body: { amountOut?: string; blockNumber?: number; error?: { code: string; message: string; requestId: string } };
}

async function sign(amountIn?: bigint): Promise<Answer> {
  const started = Date.now();
  const res = await fetch(`http://127.0.0.1:${signer.served.port}/v2/swap/sign`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-internal-token': INTERNAL_TOKEN, 'x-integrator-id': 'acme' },
    body: JSON.stringify({
      chainId: CHAIN,
      tokenIn: QUOTE.address,
      tokenOut: BASE.address,
      fee: '30',
      userAddress: USER,
      ...(amountIn === undefined ? {} : { amountIn: amountIn.toString() }),
    }),
  });
  const body = (await res.json()) as Answer['body'];
  return { status: res.status, ms: Date.now() - started, retryAfter: res.headers.get('retry-after'), body };
}

/** A sign with amountIn is 503 within the deadline; resolves once it is checked. */
async function expectUnavailable(reason: RegExp): Promise<void> {
  const answer = await sign(5_000_000_000n);
  expect(answer.status).toBe(503);
  expect(answer.retryAfter).toBe('1');
  expect(answer.body.error?.code).toBe('SERVICE_UNAVAILABLE');
  expect(answer.body.error?.message).toMatch(reason);
  expect(typeof answer.body.error?.requestId).toBe('string');
  expect(answer.ms).toBeLessThan(DEADLINE_MS + HOP_MS);
}

/** The audit records of the chain written while `run` runs: a refused sign writes none. */
async function recordsDuring(run: () => Promise<unknown>): Promise<number> {
  const before = await redis.xlen(keys.audit(CHAIN));
  await run();
  return (await redis.xlen(keys.audit(CHAIN))) - before;
}

beforeAll(async () => {
  // No mining: the test decides which block the book names. Multicall3 where the chain registry
  // puts it, as the signer's config does for this chain (its firm quotes go through aggregate3).
  node = await startHostileNode({
    chainId: CHAIN,
    port: await freePort(),
    blockMs: 3_600_000,
    multicall3: findChain(CHAIN)?.contracts.multicall3,
  });
  redis = createRedis(REDIS_URL, { name: 'firm-hostile-test' });
  await redisReady(redis);
  await redis.set(keys.integrator('acme'), JSON.stringify(integrator('acme')));
  await redis.set(
    keys.pairs(CHAIN),
    JSON.stringify({ chainId: CHAIN, quoteToken: QUOTE, baseTokens: [BASE], blockNumber: 1, refreshedAt: Date.now() }),
  );
  signer = await startFirmSigner({
    prefix,
    rpcUrl: node.httpUrl,
    contracts: HOSTILE_NODE_CONTRACTS,
    signerKey: testKey('api-signer-8453'),
    quoterKey: testKey('quoter-8453'),
    deadlineMs: DEADLINE_MS,
  });
});

afterAll(async () => {
  await signer?.close();
  const left = await redis.keys(`${prefix}:*`);
  if (left.length > 0) await redis.del(...left);
  await closeRedis(redis);
  await node?.close();
});

beforeEach(async () => {
  node.stallMs = 0;
  node.rawAnswer = undefined;
  // A block of its own per test: the node's answers for a block are kept for that block.
  await serveBook(node.mine());
});

describe('a sign with amountIn against a hostile node', () => {
  it('behavior: an honest node: 200 with the amount at the book block', async () => {
    const answer = await sign(5_000_000_000n);
    expect(answer.status).toBe(200);
    expect(answer.body.blockNumber).toBe(node.head().number);
    expect(BigInt(answer.body.amountOut!)).toBeGreaterThan(0n);
  });

  it('error: a node that stalls: 503 at the deadline, while a sign without amountIn is answered', async () => {
    node.stallMs = STALL_MS;
    let plain: Answer | undefined;
    const written = await recordsDuring(() =>
      Promise.all([
        expectUnavailable(new RegExp(`no answer within ${DEADLINE_MS} ms`)),
        sign().then((a) => (plain = a)),
      ]),
    );
    expect(plain?.status).toBe(200);
    expect(written).toBe(1); // the sign without amountIn's
  });

  it.each([
    ['not JSON', 'garbage'],
    ['a result that is not one word', JSON.stringify({ jsonrpc: '2.0', id: 1, result: '0x1234' })],
    ['an error that is no revert', JSON.stringify({ jsonrpc: '2.0', id: 1, error: { code: -32000, message: 'x' } })],
  ])('error: a node that answers garbage (%s): 503 within the deadline', async (_label, raw) => {
    node.rawAnswer = raw;
    expect(await recordsDuring(() => expectUnavailable(/no firm amount for amountIn right now/))).toBe(0);
  });

  it("error: a node that lags the book (it does not have the book's block): 503 within the deadline", async () => {
    const head = node.head();
    await serveBook({ number: head.number + 1, hash: `0x${'cd'.repeat(32)}`, timestamp: head.timestamp + 2 });
    expect(await recordsDuring(() => expectUnavailable(/the node did not quote/))).toBe(0);
  });

  it('error: a node that lags the clock: its book expired by the head-lag rule, no live book, 503', async () => {
    await redis.del(keys.book(CHAIN), bookHashKey(keys.book(CHAIN)));
    expect(await recordsDuring(() => expectUnavailable(/no live book/))).toBe(0);
  });
});
