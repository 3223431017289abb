/**
 * Firm quotes that cost a block, not a request (chain/quote-calls.ts,
 * docs/decisions/0070-firm-quotes-share-a-flight-and-a-round-trip.md), against the devnet's anvil
 * with the reference router and its Multicall3, and a real Redis holding the served book's head:
 * - 100 identical quotes at once: one node call, every answer the router's;
 * - 20 distinct amounts at once: one `eth_call` (Multicall3 `aggregate3` at the book block's
 *   hash), each answer equal to a lone `quote()` of that amount at that block (viem, apart from
 *   the code under test) and to the reference curve;
 * - a batch mixing fillable amounts, one past the curve's depth, a zero amount and a pair the
 *   router does not list: each its own answer (the amount; 422 DepthExceeded / ZeroAmount; 400
 *   PAIR_NOT_FOUND), as a lone quote would get;
 * - the signer started from its config (CHAINS' multicall3): 100 concurrent signs with the same
 *   amountIn over HTTP, one node call in `signer_firm_quote_node_calls_total`.
 */
import { randomBytes } from 'node:crypto';
import { type Hex } from 'viem';
import { PmmRouterArtifact, curveOut, type RouterCurve } from '@pmm/contracts';
import {
  createDigestSigner,
  createHttpTransport,
  createRedis,
  redisKeys,
  redisReady,
  type RedisClient,
  type RpcTransport,
} from '@pmm/core';
import { ApiError, signAmmVerification } from '@pmm/protocol';
import type { ChainStack } from '@pmm/devnet';
import { chainClients, devnetRegistry, publishBookHead, revertName, startSystem, type System } from '@pmm/testkit';
import { bookHeadReader, createFirmQuotes, type FirmQuote, type FirmQuotes, type RunningSigner } from '../../src';
import { INTERNAL_TOKEN, REDIS_URL, integrator } from '../support/fixture';
import { startFirmSigner } from '../support/firm-signer';

jest.setTimeout(120_000);

const CHAIN = 8453;
const routerAbi = PmmRouterArtifact.abi;
const prefix = `pmm-firm-batches-${randomBytes(4).toString('hex')}`;
const keys = redisKeys(prefix);

let sys: System;
let c: ChainStack;
let redis: RedisClient;
let rpc: RpcTransport;
let firm: FirmQuotes;
/** Every eth_call the firm quotes sent to the node: where to, pinned to which block. */
const ethCalls: { to: string; block: unknown }[] = [];
const roundTrips: [number, number][] = [];

const quoter = () => createDigestSigner(c.quoter.privateKey);
const base = () => c.baseTokens[0]!.address;
const quoteToken = () => c.quoteToken.address;

/** Mines a block and serves it as the book's head (each test its own block: answers are kept per block). */
async function freshBlock(): Promise<{ number: number; hash: string; timestamp: number }> {
  await chainClients(c).publicClient.request({ method: 'evm_mine' as never, params: [] as never });
  return publishBookHead(redis, keys, c);
}

/** A lone `quote()` of the router at block `number`, with viem (not the code under test). */
function loneQuote(
  head: { number: number; timestamp: number },
  tokenIn: string,
  tokenOut: string,
  amountIn: bigint,
): Promise<bigint> {
  const timestampInMilisec = BigInt(head.timestamp) * 1000n;
  const sig = signAmmVerification(quoter(), {
    chainId: CHAIN,
    verifier: c.contracts.verifier,
    tokenIn,
    tokenOut,
    timestampInMilisec,
  });
  return chainClients(c).publicClient.readContract({
    address: c.contracts.router as Hex,
    abi: routerAbi,
    functionName: 'quote',
    args: [tokenIn as Hex, amountIn, tokenOut as Hex, timestampInMilisec, sig as Hex],
    blockNumber: BigInt(head.number),
  }) as Promise<bigint>;
}

async function curve(): Promise<RouterCurve> {
  return (await chainClients(c).publicClient.readContract({
    address: c.contracts.router as Hex,
    abi: routerAbi,
    functionName: 'getCurve',
    args: [base() as Hex],
  })) as RouterCurve;
}

const ask = (amountIn: bigint) => ({ chainId: CHAIN, tokenIn: quoteToken(), tokenOut: base(), amountIn });
const bid = (amountIn: bigint) => ({ chainId: CHAIN, tokenIn: base(), tokenOut: quoteToken(), amountIn });

beforeAll(async () => {
  // The chain alone (a block per transaction, none unless asked), on the tests' Redis.
  sys = await startSystem({ chains: [CHAIN], blockIntervalMs: 0, services: [], redisUrl: REDIS_URL });
  c = sys.chain(CHAIN);
  redis = createRedis(REDIS_URL, { name: 'firm-batches-test' });
  await redisReady(redis);
  const http = createHttpTransport(c.rpcUrl, { maxAnswerBytes: 64 * 1024, onDropped: () => undefined });
  // Warmed as the signer warms its own (firm-quote-chains.ts).
  await http.request('eth_chainId', [], 5_000);
  rpc = {
    ...http,
    request: (method, params, timeoutMs) => {
      if (method === 'eth_call') ethCalls.push({ to: (params[0] as { to: string }).to, block: params[1] });
      return http.request(method, params, timeoutMs);
    },
    batch: (requests, timeoutMs) => {
      for (const r of requests) if (r.method === 'eth_call') ethCalls.push({ to: '', block: r.params[1] });
      return http.batch(requests, timeoutMs);
    },
  };
  firm = createFirmQuotes({
    chains: new Map([
      [
        CHAIN,
        {
          rpc,
          router: c.contracts.router,
          verifier: c.contracts.verifier,
          quoter: quoter(),
          multicall3: c.contracts.multicall3,
        },
      ],
    ]),
    bookHead: bookHeadReader(redis, keys),
    // Generous on a loaded machine: the deadline is firm-quotes.test.ts's subject.
    deadlineMs: 5_000,
    onRoundTrip: (_chain, quotes, calls) => roundTrips.push([quotes, calls]),
  });
});

afterAll(async () => {
  rpc?.close();
  const left = redis ? await redis.keys(`${prefix}:*`) : [];
  if (left.length > 0) await redis.del(...left);
  redis?.disconnect();
  await sys?.stop();
});

beforeEach(() => {
  ethCalls.length = 0;
  roundTrips.length = 0;
});

describe('firm quotes on the devnet: a block costs a node call per burst, not per request', () => {
  it("behavior: 100 identical quotes at once: one node call, every answer the router's quote() at the book's block", async () => {
    const head = await freshBlock();
    const amountIn = 1_000n * 10n ** BigInt(c.quoteToken.decimals);
    const answers = await Promise.all(Array.from({ length: 100 }, () => firm(ask(amountIn))));
    const lone = await loneQuote(head, quoteToken(), base(), amountIn);
    for (const a of answers) expect(a).toEqual({ grossOut: lone, blockNumber: head.number });
    expect(ethCalls).toEqual([{ to: c.contracts.multicall3, block: { blockHash: head.hash, requireCanonical: true } }]);
    // Asked again in the same block: the answer kept for it, no node call.
    expect(await firm(ask(amountIn))).toEqual({ grossOut: lone, blockNumber: head.number });
    expect(ethCalls).toHaveLength(1);
  });

  it('behavior: 20 distinct amounts at once: one aggregate3 eth_call at the block hash, each answer that of a lone quote()', async () => {
    const head = await freshBlock();
    const k = await curve();
    const unit = 10n ** BigInt(c.quoteToken.decimals);
    // Both sides, inside a tier and across tiers.
    const requests = [
      ...Array.from({ length: 10 }, (_, i) => ask(BigInt(100 + 731 * i) * unit)),
      ...Array.from({ length: 10 }, (_, i) => bid((k.bidDepths[0]! * BigInt(i + 1)) / 7n)),
    ];
    const answers = await Promise.all(requests.map((r) => firm(r)));
    expect(ethCalls).toEqual([{ to: c.contracts.multicall3, block: { blockHash: head.hash, requireCanonical: true } }]);
    expect(roundTrips).toEqual([[20, 1]]);
    for (const [i, r] of requests.entries()) {
      const lone = await loneQuote(head, r.tokenIn, r.tokenOut, r.amountIn);
      expect(answers[i]).toEqual({ grossOut: lone, blockNumber: head.number });
      // And the reference curve's, an independent computation.
      expect(answers[i]!.grossOut).toBe(curveOut(k, r.tokenIn === quoteToken() ? 'ask' : 'bid', r.amountIn));
    }
  });

  it('behavior: a batch mixing fillable amounts, past-depth, zero and an unlisted pair: each its own answer, as alone', async () => {
    const head = await freshBlock();
    const k = await curve();
    const unlisted = `0x${randomBytes(20).toString('hex')}`;
    const pastDepth = k.bidDepths[k.bidDepths.length - 1]! + 1n;
    const requests = [
      ask(2_500n * 10n ** BigInt(c.quoteToken.decimals)),
      bid(pastDepth),
      bid(k.bidDepths[0]! / 3n),
      ask(0n),
      { chainId: CHAIN, tokenIn: quoteToken(), tokenOut: unlisted, amountIn: 10n ** 6n },
      ask(7n),
    ];
    const settled = await Promise.allSettled(requests.map((r) => firm(r)));
    expect(ethCalls).toHaveLength(1);
    const answer = (i: number) => settled[i]!;
    const refusal = (i: number) => {
      const s = answer(i);
      if (s.status !== 'rejected' || !(s.reason instanceof ApiError))
        throw new Error(`request ${i}: expected a refusal`);
      return s.reason;
    };
    for (const i of [0, 2, 5]) {
      const r = requests[i]!;
      expect(answer(i)).toEqual({
        status: 'fulfilled',
        value: {
          grossOut: await loneQuote(head, r.tokenIn, r.tokenOut, r.amountIn),
          blockNumber: head.number,
        } satisfies FirmQuote,
      });
    }
    // The same reverts a lone quote() meets, each mapped as today.
    const loneRevert = (i: number) =>
      revertName(loneQuote(head, requests[i]!.tokenIn, requests[i]!.tokenOut, requests[i]!.amountIn), routerAbi);
    expect(await loneRevert(1)).toBe('DepthExceeded');
    expect([refusal(1).status, refusal(1).code, refusal(1).message]).toEqual([
      422,
      'VALIDATION_ERROR',
      `amountIn: the router cannot fill ${pastDepth} at block ${head.number} (DepthExceeded)`,
    ]);
    expect(await loneRevert(3)).toBe('ZeroAmount');
    expect([refusal(3).status, refusal(3).message]).toEqual([
      422,
      `amountIn: the router cannot fill 0 at block ${head.number} (ZeroAmount)`,
    ]);
    expect(await loneRevert(4)).toBe('PairNotListed');
    expect([refusal(4).status, refusal(4).code]).toEqual([400, 'PAIR_NOT_FOUND']);
  });
});

describe('the signer from its config: concurrent signs with the same amountIn', () => {
  let signer: RunningSigner;

  beforeAll(async () => {
    await redis.set(
      keys.integrator('acme'),
      JSON.stringify(integrator('acme', { whitelist: [c.testUser.address.toLowerCase()] })),
    );
    await redis.set(keys.pairs(CHAIN), JSON.stringify(devnetRegistry(c)));
    signer = await startFirmSigner({
      prefix,
      rpcUrl: c.rpcUrl,
      contracts: c.contracts,
      signerKey: c.apiSigner.privateKey,
      quoterKey: c.quoter.privateKey,
      deadlineMs: 5_000,
    });
  });

  afterAll(async () => {
    await signer?.close();
  });

  const nodeCalls = async (): Promise<number> => {
    const text = await (await fetch(`http://127.0.0.1:${signer.served.port}/metrics`)).text();
    return Number(/^signer_firm_quote_node_calls_total\{[^}]*chain="8453"[^}]*\} (\d+)$/m.exec(text)?.[1]);
  };

  it('behavior: 100 signs with the same amountIn in one block: 200 each, the same amountOut, one node call', async () => {
    const head = await freshBlock();
    const before = await nodeCalls();
    const amountIn = 1_234n * 10n ** BigInt(c.quoteToken.decimals);
    const answers = await Promise.all(
      Array.from({ length: 100 }, async () => {
        const res = await fetch(`http://127.0.0.1:${signer.served.port}/v2/swap/sign`, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            'x-internal-token': INTERNAL_TOKEN,
            'x-integrator-id': 'acme',
          },
          body: JSON.stringify({
            chainId: CHAIN,
            tokenIn: quoteToken(),
            tokenOut: base(),
            fee: '0',
            userAddress: c.testUser.address,
            amountIn: amountIn.toString(),
          }),
        });
        return { status: res.status, body: (await res.json()) as object };
      }),
    );
    const lone = await loneQuote(head, quoteToken(), base(), amountIn);
    // Each answer whole: a full run under four jest workers once got a 503 here, its body not kept.
    for (const a of answers)
      expect(a).toMatchObject({ status: 200, body: { amountOut: lone.toString(), blockNumber: head.number } });
    expect((await nodeCalls()) - before).toBe(1);
  });
});
