/**
 * The signer's firm quote (chain/firm-quotes.ts) against the fake node of the hostile-node
 * tests and a real Redis holding the served book's head: the exact amount at the book's block
 * when the node is honest; 503 SERVICE_UNAVAILABLE, before the deadline, when the node stalls,
 * answers garbage or lags the book (does not know its block), and when there is no live book.
 * The same through Multicall3 (a block's quotes that arrive together in one `aggregate3`,
 * chain/quote-calls.ts): each quote its own answer, and a batch the node answers with garbage
 * or not in time fails every quote of it (503), never an amount. A sign's own deadline
 * (`deadlineAt`) ends the quote sooner, and a node call that could not end by it is not started.
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
import { ApiError, ammVerificationDigest, findChain, uint256WordHex } from '@pmm/protocol';
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
import { Multicall3Artifact, PmmRouterArtifact } from '@pmm/contracts';
import { bookHeadReader, createFirmQuotes, type FirmQuoteOutcome, type FirmQuotes } from '../../src';
import { REDIS_URL, testKey } from '../support/fixture';

const CHAIN = 8453;
/**
 * FIRM_QUOTE_DEADLINE_MS here. An honest node's quote passed 300 ms in a full run at a load average
 * of 18 (the machine, not the node): the timeouts below wait for this long instead.
 */
const DEADLINE_MS = 1_500;
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
/** The node's Multicall3 (where the chain registry puts it): only the batched firm quotes below call it. */
const MULTICALL3 = findChain(CHAIN)!.contracts.multicall3!;
/** The transport of every firm quote here, warmed once. */
let warm: ReturnType<typeof rpc>;

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
  node = await startHostileNode({ chainId: CHAIN, port: await freePort(), blockMs: 3_600_000, multicall3: MULTICALL3 });
  redis = createRedis(REDIS_URL, { role: 'command', name: 'firm-quotes-test' });
  await redisReady(redis);
  // Warmed as firm-quote-chains.ts warms the signer's (Node's HTTP client loads on the first
  // request, hundreds of ms on a busy machine): not inside the first quote's deadline.
  warm = rpc();
  await warm.request('eth_chainId', [], 5_000);
  firm = createFirmQuotes({
    chains: new Map([
      [CHAIN, { rpc: warm, router: HOSTILE_NODE_CONTRACTS.router, verifier: HOSTILE_NODE_CONTRACTS.verifier, quoter }],
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
  // A block of its own per test: the node's answers for a block are kept for that block.
  await serveBook(node.mine());
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
    // Another amount than the test above's: that one's refusal is kept for the block.
    const err = await refusal(firm(request(QUOTE.address, BASE.address, HOSTILE_NODE_DEPTH_LIMIT + 1n)));
    expect(err.code).toBe('SERVICE_UNAVAILABLE');
    // The node's late answer (the revert) arrives meanwhile: nothing more is counted.
    await new Promise((r) => setTimeout(r, late + 300));
    expect(outcomes).toEqual(['timeout']);
  });
});

/** The round trips of the batched firm quotes: quotes carried, eth_calls (the node's log misses those answered raw). */
const roundTrips: [number, number][] = [];

/**
 * Firm quotes of a chain with Multicall3: what arrives together goes in one aggregate3. The
 * deadline is generous unless the test's subject (a loaded machine must not decide the outcome).
 */
function batchedFirm(deadlineMs = 2_000): FirmQuotes {
  return createFirmQuotes({
    chains: new Map([
      [
        CHAIN,
        {
          rpc: warm,
          router: HOSTILE_NODE_CONTRACTS.router,
          verifier: HOSTILE_NODE_CONTRACTS.verifier,
          quoter,
          multicall3: MULTICALL3,
        },
      ],
    ]),
    // The quotes of a test start together: one head read for them (the reader's, per turn).
    bookHead: bookHeadReader(redis, keys),
    deadlineMs,
    onOutcome: (_chain, outcome) => outcomes.push(outcome),
    onRoundTrip: (_chain, quotes, ethCalls) => roundTrips.push([quotes, ethCalls]),
  });
}

/** The eth_calls the node received since `from` (an index into its log). */
const callsSince = (from: number) => node.callBlockParams.slice(from);

describe('firm quotes through Multicall3: one aggregate3 for the quotes of a block that arrive together', () => {
  it('behavior: 20 distinct amounts and one past the depth at once: one eth_call, each its own answer', async () => {
    const head = node.head();
    const batched = batchedFirm();
    const from = node.callBlockParams.length;
    const amounts = Array.from({ length: 20 }, (_, i) => BigInt(i + 1) * 1_000_000_000n);
    const settled = await Promise.allSettled(
      [...amounts, HOSTILE_NODE_DEPTH_LIMIT].map((a) => batched(request(QUOTE.address, BASE.address, a))),
    );
    expect(callsSince(from)).toEqual([{ blockHash: head.hash, requireCanonical: true }]);
    expect(settled.slice(0, 20)).toEqual(
      amounts.map((a) => ({
        status: 'fulfilled',
        value: { grossOut: expectedOut(a, head.price, QUOTE.address), blockNumber: head.number },
      })),
    );
    const past = settled[20]!;
    expect(past.status === 'rejected' && (past.reason as ApiError).code).toBe('VALIDATION_ERROR');
    expect(outcomes.filter((o) => o === 'quoted')).toHaveLength(20);
    expect(outcomes.filter((o) => o === 'unfillable')).toHaveLength(1);
  });

  const word = (n: number) => uint256WordHex(n);
  const aggregate3 = new Interface(Multicall3Artifact.abi);
  /** An aggregate3 answer of `n` results, each a well-formed amount: honest in shape, not in count. */
  const results = (n: number) =>
    aggregate3.encodeFunctionResult('aggregate3', [Array.from({ length: n }, () => [true, `0x${word(5)}`])]);
  it.each([
    ['not JSON', 'garbage'],
    ['not hex', JSON.stringify({ jsonrpc: '2.0', id: 1, result: { amount: 1 } })],
    ['one result fewer than the calls', JSON.stringify({ jsonrpc: '2.0', id: 1, result: results(4) })],
    ['one result more than the calls', JSON.stringify({ jsonrpc: '2.0', id: 1, result: results(6) })],
    ['a lone word', JSON.stringify({ jsonrpc: '2.0', id: 1, result: `0x${word(5)}` })],
    ['cut short', JSON.stringify({ jsonrpc: '2.0', id: 1, result: results(5).slice(0, 300) })],
    ['an error without revert data', JSON.stringify({ jsonrpc: '2.0', id: 1, error: { code: -32000, message: 'x' } })],
  ])('error: the node answers the batch with garbage (%s): every quote of it 503, none an amount', async (_l, raw) => {
    const batched = batchedFirm();
    node.rawAnswer = raw;
    roundTrips.length = 0;
    const settled = await Promise.allSettled(
      [1n, 2n, 3n, 4n, 5n].map((a) => batched(request(QUOTE.address, BASE.address, a * 10n ** 9n))),
    );
    expect(roundTrips).toEqual([[5, 1]]);
    for (const s of settled) {
      expect(s.status).toBe('rejected');
      expect((s as PromiseRejectedResult).reason).toMatchObject({ code: 'SERVICE_UNAVAILABLE', status: 503 });
    }
    expect(outcomes).toHaveLength(5);
    for (const o of outcomes) expect(['node_failed', 'node_garbage']).toContain(o);
    // Not kept past its flight: the same quotes, asked again of an honest node, are answered.
    node.rawAnswer = undefined;
    const again = await batched(request(QUOTE.address, BASE.address, 10n ** 9n));
    expect(again.grossOut).toBe(expectedOut(10n ** 9n, node.head().price, QUOTE.address));
  });

  it('error: a batch the node does not answer in time: every quote of it 503 timeout, within the deadline', async () => {
    const batched = batchedFirm(DEADLINE_MS);
    node.stallMs = STALL_MS;
    const started = Date.now();
    const settled = await Promise.allSettled(
      [1n, 2n, 3n].map((a) => batched(request(QUOTE.address, BASE.address, a * 10n ** 9n))),
    );
    expect(Date.now() - started).toBeLessThan(STALL_MS);
    for (const s of settled) expect((s as PromiseRejectedResult).reason).toMatchObject({ code: 'SERVICE_UNAVAILABLE' });
    expect(outcomes).toEqual(['timeout', 'timeout', 'timeout']);
  });
});

describe("firm quotes: the sign's own deadline (deadlineAt)", () => {
  it('error: a deadline already passed: 503 timeout at once, nothing asked of Redis or the node', async () => {
    const from = node.callBlockParams.length;
    let reads = 0;
    const counted = createFirmQuotes({
      chains: new Map([
        [
          CHAIN,
          { rpc: warm, router: HOSTILE_NODE_CONTRACTS.router, verifier: HOSTILE_NODE_CONTRACTS.verifier, quoter },
        ],
      ]),
      bookHead: (id) => {
        reads++;
        return bookHeadReader(redis, keys)(id);
      },
      deadlineMs: DEADLINE_MS,
      onOutcome: (_chain, outcome) => outcomes.push(outcome),
    });
    const err = await refusal(
      counted({ ...request(QUOTE.address, BASE.address, 10n ** 9n), deadlineAt: Date.now() - 1 }),
    );
    expect(err.code).toBe('SERVICE_UNAVAILABLE');
    expect(err.message).toContain("no answer before the sign's deadline");
    expect([reads, callsSince(from).length, outcomes]).toEqual([0, 0, ['timeout']]);
  });

  it('error: a deadline before FIRM_QUOTE_DEADLINE_MS ends the quote then: 503 at the earlier one', async () => {
    node.stallMs = STALL_MS;
    const started = Date.now();
    const err = await refusal(
      firm({ ...request(QUOTE.address, BASE.address, 10n ** 9n), deadlineAt: started + DEADLINE_MS / 3 }),
    );
    const took = Date.now() - started;
    expect(err.message).toContain("no answer before the sign's deadline");
    expect(took).toBeGreaterThanOrEqual(DEADLINE_MS / 3 - 5);
    expect(took).toBeLessThan(DEADLINE_MS);
    expect(outcomes).toEqual(['timeout']);
  });

  it("error: less time left than the node's fastest recent round trip: no node call started, 503 timeout", async () => {
    // A node that takes 400 ms, measured on three quotes of its own; the quote below has 200 ms
    // left (at 80 and 40 ms, a loaded machine spent the 40 before the check and the message was
    // that of a deadline already past).
    const slow = batchedFirm();
    node.stallMs = 400;
    for (const a of [1n, 2n, 3n]) await slow(request(QUOTE.address, BASE.address, a * 10n ** 9n));
    outcomes.length = 0;
    const from = node.callBlockParams.length;
    const err = await refusal(
      slow({ ...request(QUOTE.address, BASE.address, 4n * 10n ** 9n), deadlineAt: Date.now() + 200 }),
    );
    expect(err.code).toBe('SERVICE_UNAVAILABLE');
    expect(err.message).toMatch(/the node's round trip \(\d+ ms at the fastest of late\) would end after the deadline/);
    expect(callsSince(from)).toHaveLength(0);
    expect(outcomes).toEqual(['timeout']);
  });
});
