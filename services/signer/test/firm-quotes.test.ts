/**
 * The signer's firm quote (chain/firm-quotes.ts) against the fake node of the hostile-node
 * tests and a real Redis holding the served book's head: the exact amount at the book's block
 * when the node is honest; 503 SERVICE_UNAVAILABLE, before the deadline, when the node stalls,
 * answers garbage or lags the book (does not know its block), and when there is no live book.
 */
import { randomBytes } from 'node:crypto';
import {
  bookHashKey,
  createDigestSigner,
  createHttpTransport,
  createRedis,
  redisKeys,
  redisReady,
  type RedisClient,
} from '@pmm/core';
import { ApiError, ammVerificationDigest } from '@pmm/protocol';
import {
  HOSTILE_NODE_CONTRACTS,
  HOSTILE_NODE_DEPTH_LIMIT,
  HOSTILE_NODE_TOKENS,
  freePort,
  startHostileNode,
  type HostileNode,
} from '@pmm/testkit';
import { recoverAddress, type Hex } from 'viem';
import { Interface } from 'ethers';
import { PmmRouterArtifact } from '@pmm/contracts';
import { bookHeadReader, createFirmQuotes, type FirmQuoteOutcome, type FirmQuotes } from '../src';
import { REDIS_URL, testKey } from './support/fixture';

const CHAIN = 8453;
const DEADLINE_MS = 300;
/** Far longer than the deadline: a sign that waited for the node would take this long. */
const STALL_MS = 10_000;
const { quote: QUOTE, base: BASE } = HOSTILE_NODE_TOKENS;
const router = new Interface(PmmRouterArtifact.abi);

let node: HostileNode;
let redis: RedisClient;
const keys = redisKeys(`pmm-test-${randomBytes(6).toString('hex')}`);
const quoter = createDigestSigner(testKey('quoter-8453'));
const rpc = () => createHttpTransport(node.httpUrl, { maxAnswerBytes: 64 * 1024, onDropped: () => undefined });
const outcomes: FirmQuoteOutcome[] = [];
let firm: FirmQuotes;

/** Writes the served book's head as the indexer does: the body's leading members and the hash key. */
async function serveBook(block: { number: number; hash: string; timestamp: number }): Promise<void> {
  const book = keys.book(CHAIN);
  const body = JSON.stringify({ chainId: CHAIN, blockNumber: block.number, blockTime: block.timestamp, pairs: [] });
  await redis.mset(book, body, bookHashKey(book), block.hash);
}

/** The fake router's linear price of the node's block: quote units per base unit. */
function expectedOut(amountIn: bigint, price: number, tokenIn: string): bigint {
  const num = BigInt(price) * 10n ** BigInt(QUOTE.decimals);
  const den = 10n ** BigInt(BASE.decimals);
  return tokenIn === QUOTE.address ? (amountIn * den) / num : (amountIn * num) / den;
}

async function refusal(p: Promise<unknown>): Promise<ApiError> {
  try {
    await p;
  } catch (err) {
    if (err instanceof ApiError) return err;
    throw err;
  }
  throw new Error('expected a refusal');
}

beforeAll(async () => {
  // No mining: the test decides which block the book names.
  node = await startHostileNode({ chainId: CHAIN, port: await freePort(), blockMs: 3_600_000 });
  redis = createRedis(REDIS_URL, { role: 'command', name: 'firm-quotes-test' });
  await redisReady(redis);
  firm = createFirmQuotes({
    chains: new Map([
      [CHAIN, { rpc: rpc(), router: HOSTILE_NODE_CONTRACTS.router, verifier: HOSTILE_NODE_CONTRACTS.verifier, quoter }],
    ]),
    bookHead: bookHeadReader(redis, keys),
    deadlineMs: DEADLINE_MS,
    onOutcome: (_chain, outcome) => outcomes.push(outcome),
  });
});

afterAll(async () => {
  await redis.del(keys.book(CHAIN), bookHashKey(keys.book(CHAIN)));
  redis.disconnect();
  await node.close();
});

beforeEach(async () => {
  node.stallMs = 0;
  node.rawAnswer = undefined;
  outcomes.length = 0;
  await serveBook(node.head());
});

const request = (tokenIn: string, tokenOut: string, amountIn: bigint) => ({
  chainId: CHAIN,
  tokenIn,
  tokenOut,
  amountIn,
});

describe('firm quotes: an honest node', () => {
  it("behavior: both sides are the router's quote() at the served book's block, pinned by hash", async () => {
    const head = node.head();
    const calls = node.callBlockParams.length;
    const buy = await firm(request(QUOTE.address, BASE.address, 5_000_000_000n));
    const sell = await firm(request(BASE.address, QUOTE.address, 3n * 10n ** 18n));
    expect(buy).toEqual({ grossOut: expectedOut(5_000_000_000n, head.price, QUOTE.address), blockNumber: head.number });
    expect(sell).toEqual({
      grossOut: expectedOut(3n * 10n ** 18n, head.price, BASE.address),
      blockNumber: head.number,
    });
    expect(node.callBlockParams.slice(calls)).toEqual([
      { blockHash: head.hash, requireCanonical: true },
      { blockHash: head.hash, requireCanonical: true },
    ]);
    expect(outcomes).toEqual(['quoted', 'quoted']);
  });

  it('behavior: the quote() carries the quoter authorisation of that side and block time', async () => {
    const head = node.head();
    const seen: string[] = [];
    const relay = createFirmQuotes({
      chains: new Map([
        [
          CHAIN,
          {
            rpc: {
              ...rpc(),
              request: (method, params, timeoutMs) => {
                seen.push((params[0] as { data: string }).data);
                return rpc().request(method, params, timeoutMs);
              },
            },
            router: HOSTILE_NODE_CONTRACTS.router,
            verifier: HOSTILE_NODE_CONTRACTS.verifier,
            quoter,
          },
        ],
      ]),
      bookHead: bookHeadReader(redis, keys),
      deadlineMs: DEADLINE_MS,
    });
    await relay(request(QUOTE.address, BASE.address, 7n));
    const [tokenIn, amountIn, tokenOut, timestampInMilisec, sig] = router.decodeFunctionData('quote', seen[0]!);
    expect([String(tokenIn).toLowerCase(), amountIn, String(tokenOut).toLowerCase(), timestampInMilisec]).toEqual([
      QUOTE.address.toLowerCase(),
      7n,
      BASE.address.toLowerCase(),
      BigInt(head.timestamp) * 1000n,
    ]);
    const digest = ammVerificationDigest({
      chainId: CHAIN,
      verifier: HOSTILE_NODE_CONTRACTS.verifier,
      tokenIn: QUOTE.address,
      tokenOut: BASE.address,
      timestampInMilisec: BigInt(head.timestamp) * 1000n,
    });
    const signer = await recoverAddress({ hash: `0x${Buffer.from(digest).toString('hex')}`, signature: sig as Hex });
    expect(signer).toBe(quoter.address);
  });
});

describe('firm quotes: no live state → 503 within the deadline', () => {
  const expect503 = async (outcome: FirmQuoteOutcome) => {
    const started = Date.now();
    const err = await refusal(firm(request(QUOTE.address, BASE.address, 1_000_000n)));
    expect(Date.now() - started).toBeLessThan(STALL_MS);
    expect(err.code).toBe('SERVICE_UNAVAILABLE');
    expect(err.status).toBe(503);
    expect(err.headers).toEqual({ 'Retry-After': '1' });
    expect(err.message).toMatch(/^chain 8453: no firm amount for amountIn right now \(.+\); retry shortly/);
    expect(outcomes).toEqual([outcome]);
    return err;
  };

  it('error: a node that stalls', async () => {
    node.stallMs = STALL_MS;
    expect((await expect503('timeout')).message).toContain(`no answer within ${DEADLINE_MS} ms`);
  });

  it.each([
    ['not JSON', 'garbage'],
    ['a result that is not one word', JSON.stringify({ jsonrpc: '2.0', id: 1, result: '0x1234' })],
    ['a result that is not hex', JSON.stringify({ jsonrpc: '2.0', id: 1, result: { amount: 1 } })],
    ['an array', '[]'],
  ])('error: a node that answers garbage: %s', async (_label, raw) => {
    node.rawAnswer = raw;
    const err = await refusal(firm(request(QUOTE.address, BASE.address, 1_000_000n)));
    expect(err.code).toBe('SERVICE_UNAVAILABLE');
    expect(outcomes).toHaveLength(1);
    expect(['node_failed', 'node_garbage']).toContain(outcomes[0]);
  });

  it("error: a node that lags (it does not have the served book's block)", async () => {
    const head = node.head();
    await serveBook({ number: head.number + 1, hash: `0x${'ab'.repeat(32)}`, timestamp: head.timestamp + 2 });
    await expect503('node_failed');
  });

  it('error: no live book (none yet, or expired by the head-lag rule)', async () => {
    await redis.del(keys.book(CHAIN), bookHashKey(keys.book(CHAIN)));
    expect((await expect503('no_book')).message).toContain('no live book');
  });

  it('error: a chain without a node or quoter key', async () => {
    const err = await refusal(firm({ ...request(QUOTE.address, BASE.address, 1n), chainId: 56 }));
    expect(err.code).toBe('SERVICE_UNAVAILABLE');
    expect(err.message).toContain('chain 56: no firm amount for amountIn right now (firm quotes are not configured');
  });
});

describe('firm quotes: an amount the router cannot fill', () => {
  it('error: 422 VALIDATION_ERROR naming the amount and block, counted once as unfillable', async () => {
    const err = await refusal(firm(request(QUOTE.address, BASE.address, HOSTILE_NODE_DEPTH_LIMIT)));
    expect(err.code).toBe('VALIDATION_ERROR');
    expect(err.status).toBe(422);
    expect(err.message).toMatch(/^amountIn: the router cannot fill \d+ at block \d+ \(DepthExceeded\)$/);
    expect(outcomes).toEqual(['unfillable']);
  });

  it('error: the refusal arriving after the deadline is the timeout alone, counted once', async () => {
    const late = DEADLINE_MS * 3;
    node.stallMs = late;
    const err = await refusal(firm(request(QUOTE.address, BASE.address, HOSTILE_NODE_DEPTH_LIMIT)));
    expect(err.code).toBe('SERVICE_UNAVAILABLE');
    // The node's late answer (the revert) arrives meanwhile: nothing more is counted.
    await new Promise((r) => setTimeout(r, late + 300));
    expect(outcomes).toEqual(['timeout']);
  });
});
