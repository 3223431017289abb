/**
 * Audit trail and settlement end to end on the devnet: two integrators swap on two chains through
 * the gateway and the signer (processes as `npm start` runs them, from testkit's startSystem,
 * over anvil chains with the reference router and Redis), and a
 * third (gamma) signs for its executor contract (TestExecutor, whitelisted as its userAddress),
 * which calls the router inside its own transactions: one swap, a split route with two
 * signatures, one signature used twice, a leg that reverts inside a transaction that succeeds,
 * a late swap; swaps are also signed outside the service, directly and through the executor.
 * Then `settle` must report every swap one by one (amounts read back here with viem from the
 * receipts' Transfer logs, independently of the code under test), attribute each to the
 * integrator that asked, list the outside ones apart, give the same bytes twice and the same
 * report with each of the node's tracers (callTracer, trace_transaction, struct logs, and struct
 * logs alone behind a node that offers nothing else), and, against a node that refuses tracing,
 * list the executor's transactions apart with the reason in a report marked incomplete (exit 3);
 * `audit tx` must name the right integrator for each swap of each transaction.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import request from 'supertest';
import {
  parseEventLogs,
  parseUnits,
  type Account,
  type Chain,
  type Hex,
  type PublicClient,
  type Transport,
  type WalletClient,
} from 'viem';
import { TestExecutorArtifact, TestTokenArtifact } from '@pmm/contracts';
import {
  DEFAULT_KEY_PREFIX,
  createDigestSigner,
  createRedis,
  redisKeys,
  redisReady,
  type RedisClient,
} from '@pmm/core';
import { encodeSwapCalldata, formatUnits, signSwapQuote } from '@pmm/protocol';
import type { ChainStack } from '@pmm/devnet';
import { ApiKeyStore } from '@pmm/gateway';
import {
  chainClients,
  devnetRegistry,
  jsonRpcRelay,
  publishBookHead,
  minedReceipt,
  startSystem,
  withoutTracing,
  type JsonRpcFault,
  type JsonRpcRequest,
  type System,
} from '@pmm/testkit';
import {
  AuditReader,
  SETTLE_INCOMPLETE,
  createChainReader,
  runAuditCommand,
  runSettleCommand,
  type ChainReader,
  type SettlementReport,
} from '../src';

jest.setTimeout(240_000);

const CHAINS = [8453, 56] as const;
const erc20Abi = TestTokenArtifact.abi;

interface ChainCtx {
  stack: ChainStack;
  pub: PublicClient;
  user: WalletClient<Transport, Chain, Account>;
  reader: ChainReader;
}

let sys: System;
/** The gateway's public URL. */
let gw: string;
/** The server of what can be rebuilt (registries, books), as its administrator. */
let redis: RedisClient;
/** The records' server as the key CLI's user (`keys`) reaches it: integrators and their keys. */
let keysUser: RedisClient;
/** The records' server as the operator's commands (`audit`, `settle`: user `operator`) read it. */
let operator: RedisClient;
const keys = redisKeys(DEFAULT_KEY_PREFIX);
const ctx = new Map<number, ChainCtx>();
const apiKeys = new Map<string, string>();
const c = (id: number) => ctx.get(id)!;

/** What the test did, per swap: who asked (undefined: signed outside the service). */
interface Done {
  chainId: number;
  hash: Hex;
  /** Order among the transaction's swaps that executed. */
  callIndex: number;
  via: 'direct' | 'nested';
  integratorId: string | undefined;
  fee: bigint;
  tokenIn: string;
  tokenOut: string;
  amountIn: bigint;
}
const done: Done[] = [];
/** Transactions with a reverted executor leg, and the executor's transactions (for the no-trace node). */
const executorTxs: Hex[] = [];
let executor: Hex;
let revertedLegTx: Hex;
let reusedTx: Hex;
let lateTx: Hex;
let fromSeconds = 0;
let toSeconds = 0;

beforeAll(async () => {
  // Steps recorded: the struct-log tracer is one of the paths under test. A block per
  // transaction: each swap's block is known when its receipt arrives.
  // No indexer: the sign path needs only the pair registry, written as the indexer writes it.
  sys = await startSystem({
    chains: [...CHAINS],
    blockIntervalMs: 0,
    stepsTracing: true,
    services: ['signer', 'gateway'],
    beforeServices: async ({ redisUrl, chains }) => {
      redis = createRedis(redisUrl, { name: 'settle-e2e' });
      await redisReady(redis);
      for (const id of CHAINS) {
        await redis.set(keys.pairs(id), JSON.stringify(devnetRegistry(chains[String(id)]!)));
        // A sign with amountIn is quoted at the served book's block: the latest one, published as the indexer would.
        await publishBookHead(redis, keys, chains[String(id)]!);
      }
    },
  });
  gw = sys.gateway.url;
  for (const id of CHAINS) {
    const stack = sys.chain(id);
    const clients = chainClients(stack);
    ctx.set(id, {
      stack,
      pub: clients.publicClient,
      user: clients.wallet(stack.testUser.privateKey),
      reader: createChainReader(id, stack.rpcUrl),
    });
  }
  keysUser = createRedis(sys.redisEnvOf('keys').REDIS_RECORDS_URL, { name: 'settle-e2e-keys' });
  operator = createRedis(sys.redisEnvOf('operator').REDIS_RECORDS_URL, { name: 'settle-e2e-operator' });
  await Promise.all([redisReady(keysUser), redisReady(operator)]);
  // One integrator each, with its own key, as the key CLI creates them.
  const store = new ApiKeyStore(keysUser, DEFAULT_KEY_PREFIX);
  const whitelist = CHAINS.map((id) => c(id).stack.testUser.address.toLowerCase());
  const apiKey = async (id: string, list: string[]) => {
    await store.putIntegrator({
      id,
      name: id,
      whitelist: list,
      chains: [],
      rateLimit: { requests: 100_000, windowSeconds: 60 },
      disabled: false,
    });
    return (await store.issueKey(id)).apiKey;
  };
  for (const id of ['alpha', 'beta']) apiKeys.set(id, await apiKey(id, whitelist));
  // Gamma is an aggregator: it signs for its executor contract, the only whitelisted address.
  const x = c(8453);
  const deploy = await x.user.deployContract({
    abi: TestExecutorArtifact.abi,
    bytecode: TestExecutorArtifact.bytecode as Hex,
    args: [x.stack.contracts.router as Hex],
  });
  executor = (await minedReceipt(x.pub, deploy)).contractAddress!.toLowerCase() as Hex;
  apiKeys.set('gamma', await apiKey('gamma', [executor]));
  for (const token of [x.stack.quoteToken.address, x.stack.tokens.WETH!.address]) {
    const approve = await x.user.writeContract({
      address: token as Hex,
      abi: erc20Abi,
      functionName: 'approve',
      args: [executor, 2n ** 255n],
    });
    await minedReceipt(x.pub, approve);
  }
}, 240_000);

afterAll(async () => {
  for (const x of ctx.values()) x.reader.close();
  for (const client of [redis, keysUser, operator]) client?.disconnect();
  await sys?.stop();
});

const latestTime = async (id: number) => Number((await c(id).pub.getBlock()).timestamp);

async function approveAndSend(chainId: number, tokenIn: string, amountIn: bigint, calldata: Hex): Promise<Hex> {
  const x = c(chainId);
  const approveHash = await x.user.writeContract({
    address: tokenIn as Hex,
    abi: erc20Abi,
    functionName: 'approve',
    args: [x.stack.contracts.router as Hex, amountIn],
  });
  await minedReceipt(x.pub, approveHash);
  const hash = await x.user.sendTransaction({ to: x.stack.contracts.router as Hex, data: calldata });
  expect((await minedReceipt(x.pub, hash)).status).toBe('success');
  return hash;
}

/** A swap through the gateway with the integrator's API key. */
async function swapThroughStack(
  integratorId: string,
  chainId: number,
  tokenIn: string,
  tokenOut: string,
  amountIn: bigint,
  fee: bigint,
): Promise<void> {
  const res = await request(gw)
    .post('/v2/swap/sign')
    .set('X-API-KEY', apiKeys.get(integratorId)!)
    .set('Content-Type', 'application/json')
    .send(
      JSON.stringify({
        chainId,
        tokenIn,
        tokenOut,
        fee: fee.toString(),
        userAddress: c(chainId).stack.testUser.address,
        amountIn: amountIn.toString(),
      }),
    );
  expect(res.status).toBe(200);
  const hash = await approveAndSend(chainId, tokenIn, amountIn, res.body.calldata as Hex);
  done.push({
    chainId,
    hash,
    callIndex: 0,
    via: 'direct',
    integratorId,
    fee,
    tokenIn: tokenIn.toLowerCase(),
    tokenOut: tokenOut.toLowerCase(),
    amountIn,
  });
}

/** One leg of the executor: the swap arguments, signed through the stack (an integrator) or outside it. */
interface Leg {
  tokenIn: Hex;
  amountIn: bigint;
  tokenOut: Hex;
  minOutAmount: bigint;
  quoteTimestamp: bigint;
  verificationData: Hex;
  integratorId: string | undefined;
  fee: bigint;
}

async function legThroughStack(integratorId: string, tokenIn: string, tokenOut: string, amountIn: bigint, fee: bigint) {
  const res = await request(gw)
    .post('/v2/swap/sign')
    .set('X-API-KEY', apiKeys.get(integratorId)!)
    .set('Content-Type', 'application/json')
    .send(
      JSON.stringify({
        chainId: 8453,
        tokenIn,
        tokenOut,
        fee: fee.toString(),
        userAddress: executor,
        amountIn: amountIn.toString(),
      }),
    );
  expect(res.status).toBe(200);
  const body = res.body as { verificationData: Hex; timestamp: number | string };
  return {
    tokenIn: tokenIn as Hex,
    amountIn,
    tokenOut: tokenOut as Hex,
    minOutAmount: 0n,
    quoteTimestamp: BigInt(body.timestamp),
    verificationData: body.verificationData,
    integratorId,
    fee,
  } satisfies Leg;
}

async function legOutsideService(tokenIn: string, tokenOut: string, amountIn: bigint, fee: bigint): Promise<Leg> {
  const timestamp = BigInt(await latestTime(8453));
  const signed = signSwapQuote(createDigestSigner(c(8453).stack.apiSigner.privateKey), {
    tokenIn,
    tokenOut,
    timestamp,
    fee,
    originRate: 0n,
    userAddress: executor,
  });
  return {
    tokenIn: tokenIn as Hex,
    amountIn,
    tokenOut: tokenOut as Hex,
    minOutAmount: 0n,
    quoteTimestamp: timestamp,
    verificationData: signed.verificationData as Hex,
    integratorId: undefined,
    fee,
  };
}

/** The executor runs the legs in one transaction (swapOne for a single leg); `fails` marks legs expected to revert. */
async function throughExecutor(legs: Leg[], fails: boolean[] = legs.map(() => false)): Promise<Hex> {
  const x = c(8453);
  const args = legs.map(({ integratorId: _i, fee: _f, ...leg }) => leg);
  const hash =
    legs.length === 1
      ? await x.user.writeContract({
          address: executor,
          abi: TestExecutorArtifact.abi,
          functionName: 'swapOne',
          args: [args[0]!],
        })
      : await x.user.writeContract({
          address: executor,
          abi: TestExecutorArtifact.abi,
          functionName: 'swapBatch',
          args: [args, fails.some(Boolean)],
        });
  expect((await minedReceipt(x.pub, hash)).status).toBe('success');
  let callIndex = 0;
  legs.forEach((leg, i) => {
    if (fails[i]) return;
    done.push({
      chainId: 8453,
      hash,
      callIndex: callIndex++,
      via: 'nested',
      integratorId: leg.integratorId,
      fee: leg.fee,
      tokenIn: leg.tokenIn.toLowerCase(),
      tokenOut: leg.tokenOut.toLowerCase(),
      amountIn: leg.amountIn,
    });
  });
  executorTxs.push(hash);
  return hash;
}

/** A swap signed with the chain's key outside the service: valid on-chain, unknown to the trail. */
async function swapOutsideService(chainId: number, tokenIn: string, tokenOut: string, amountIn: bigint, fee: bigint) {
  const s = c(chainId).stack;
  const timestamp = BigInt(await latestTime(chainId));
  const signed = signSwapQuote(createDigestSigner(s.apiSigner.privateKey), {
    tokenIn,
    tokenOut,
    timestamp,
    fee,
    originRate: 0n,
    userAddress: s.testUser.address,
  });
  const calldata = encodeSwapCalldata({
    tokenIn,
    amountIn,
    tokenOut,
    minAmountOut: 0n,
    quoteTimestamp: timestamp,
    verificationData: signed.verificationData,
  }) as Hex;
  const hash = await approveAndSend(chainId, tokenIn, amountIn, calldata);
  done.push({
    chainId,
    hash,
    callIndex: 0,
    via: 'direct',
    integratorId: undefined,
    fee,
    tokenIn: tokenIn.toLowerCase(),
    tokenOut: tokenOut.toLowerCase(),
    amountIn,
  });
}

/**
 * amountIn and amountOut of each swap of a transaction, from its receipt's Transfer logs (viem):
 * every swap moves tokenIn to the router, then tokenOut from it; a reverted leg left no log.
 */
async function moved(d: Done): Promise<{ amountIn: bigint; amountOut: bigint; block: bigint }> {
  const x = c(d.chainId);
  const receipt = await x.pub.getTransactionReceipt({ hash: d.hash });
  const router = x.stack.contracts.router.toLowerCase();
  const logs = parseEventLogs({ abi: erc20Abi, eventName: 'Transfer', logs: receipt.logs }) as unknown as {
    address: string;
    args: { from: string; to: string; value: bigint };
  }[];
  const swaps: { amountIn: bigint; amountOut: bigint }[] = [];
  for (const l of logs) {
    if (l.args.to.toLowerCase() === router) swaps.push({ amountIn: l.args.value, amountOut: 0n });
    else if (l.args.from.toLowerCase() === router) swaps[swaps.length - 1]!.amountOut = l.args.value;
  }
  const mine = swaps[d.callIndex]!;
  return { ...mine, block: receipt.blockNumber };
}

function settleDeps(out: string[], err: string[], readers: Map<number, ChainReader> = new Map()) {
  return {
    lookup: new AuditReader(operator, keys),
    chains: [...CHAINS],
    chain: (id: number) => ({
      reader: readers.get(id) ?? c(id).reader,
      router: c(id).stack.contracts.router,
      helper: c(id).stack.contracts.helper,
    }),
    out: (t: string) => out.push(t),
    err: (l: string) => err.push(l),
  };
}

async function settle(
  args: string[],
  readers?: Map<number, ChainReader>,
): Promise<{ code: number; out: string; err: string[] }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runSettleCommand(args, settleDeps(out, err, readers));
  return { code, out: out.join(''), err };
}

async function auditTx(chainId: number, hash: string, json = false) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runAuditCommand(['tx', String(chainId), hash, ...(json ? ['--json'] : [])], {
    trail: new AuditReader(operator, keys),
    chain: (id) => ({ reader: c(id).reader, router: c(id).stack.contracts.router }),
    out: (l) => out.push(l),
    err: (l) => err.push(l),
  });
  return { code, out, err };
}

/**
 * A node whose only tracer is the default struct logger (as Hardhat 2): no trace_* method, and
 * debug_traceTransaction refuses any named tracer with Hardhat's own words.
 */
const structLogsOnly = (r: JsonRpcRequest): JsonRpcFault => {
  if (/^trace_/.test(r.method)) return { code: -32601, message: `Method ${r.method} is not supported` };
  const options = r.params?.[1] as { tracer?: unknown } | undefined;
  if (r.method === 'debug_traceTransaction' && options?.tracer !== undefined)
    return {
      code: -32603,
      message: 'Hardhat currently only supports the default tracer, so no tracer parameter should be passed.',
    };
  return 'pass';
};

describe('settlement and audit on the devnet', () => {
  beforeAll(async () => {
    // Blocks of this test come after every block so far (timestamps never decrease), and never
    // before the wall clock: the node keeps the offset of evm_setNextBlockTimestamp, so a latest
    // block some seconds old (a loaded machine) would put every later block that far behind the
    // signer's clock, and its quotes would revert QuoteFromFuture.
    fromSeconds = Math.max(Math.floor(Date.now() / 1000), ...(await Promise.all(CHAINS.map(latestTime)))) + 1;
    for (const id of CHAINS)
      await c(id).pub.request({ method: 'evm_setNextBlockTimestamp' as never, params: [fromSeconds] as never });
    const [b, q] = [(id: number) => c(id).stack.tokens.WETH!.address, (id: number) => c(id).stack.quoteToken.address];
    const unit = (id: number) => 10n ** BigInt(c(id).stack.quoteToken.decimals);
    await swapThroughStack('alpha', 8453, q(8453), b(8453), 100n * unit(8453), 30n); // buy WETH with USDC
    await swapThroughStack('beta', 8453, b(8453), q(8453), 10n ** 16n, 10n); // sell 0.01 WETH
    await swapThroughStack('beta', 56, q(56), b(56), 50n * unit(56), 100n); // buy WETH with USDT
    await swapThroughStack('alpha', 56, b(56), q(56), 2n * 10n ** 16n, 1n); // sell 0.02 WETH
    await swapThroughStack('alpha', 8453, q(8453), b(8453), 25n * unit(8453), 30n);
    await swapOutsideService(8453, q(8453), b(8453), 10n * unit(8453), 20n);
    // Through the executor (gamma): nested, a split route with two signatures, one signature twice,
    // a leg that reverts (slippage) beside one that executes, one signed outside the service.
    const [Q, B] = [q(8453), b(8453)];
    const u = unit(8453);
    await throughExecutor([await legThroughStack('gamma', Q, B, 40n * u, 25n)]);
    await throughExecutor([
      await legThroughStack('gamma', Q, B, 30n * u, 15n),
      await legThroughStack('gamma', B, Q, 10n ** 16n, 5n),
    ]);
    const once = await legThroughStack('gamma', Q, B, 20n * u, 40n);
    reusedTx = await throughExecutor([once, once]);
    const tooGreedy = { ...(await legThroughStack('gamma', B, Q, 10n ** 15n, 50n)), minOutAmount: 10n ** 30n };
    revertedLegTx = await throughExecutor(
      [await legThroughStack('gamma', Q, B, 15n * u, 35n), tooGreedy],
      [false, true],
    );
    await throughExecutor([await legOutsideService(Q, B, 12n * u, 45n)]);
    // Executed 20 s after signing (the devnet router accepts 60 s).
    const late = await legThroughStack('gamma', Q, B, 11n * u, 20n);
    await c(8453).pub.request({ method: 'evm_increaseTime' as never, params: [20] as never });
    lateTx = await throughExecutor([late]);
    toSeconds = Math.max(...(await Promise.all(CHAINS.map(latestTime)))) + 1;
    // A block at the period's end on each chain: the period is over there (else settle's report is incomplete).
    for (const id of CHAINS) await c(id).pub.request({ method: 'evm_mine' as never, params: [toSeconds] as never });
  });

  it('behavior: settle reports every swap one by one, attributed to the integrator that asked, the outside one apart', async () => {
    const from = new Date(fromSeconds * 1000).toISOString();
    const to = new Date(toSeconds * 1000).toISOString();
    const run = await settle(['--from', from, '--to', to, '--span', '1']);
    expect(run.err.filter((l) => l.startsWith('settle: error'))).toEqual([]);
    expect(run.code).toBe(0);
    const report = JSON.parse(run.out) as SettlementReport;
    expect(report.period).toEqual({ from, to });
    // Progress on a range of more than one window.
    expect(run.err.some((l) => /^settle: chain 8453: through block \d+ \(\d+ %\), \d+ swaps$/.test(l))).toBe(true);
    // The node's callTracer, the first choice, traced the executor's transactions.
    expect(run.err).toContain(`settle: chain 8453: ${executorTxs.length} transactions traced with callTracer`);

    const lines = [...report.swaps, ...report.unattributed];
    expect(lines).toHaveLength(done.length);
    const D = 100_000n;
    for (const d of done) {
      const line = lines.find((l) => l.txHash === d.hash.toLowerCase() && l.callIndex === d.callIndex);
      expect(line).toBeDefined();
      const s = c(d.chainId).stack;
      const quote = s.quoteToken;
      const weth = s.tokens.WETH!;
      const { amountIn, amountOut, block } = await moved(d);
      const buy = d.tokenIn === quote.address.toLowerCase();
      const fees = buy ? (amountIn * d.fee) / D : (amountOut * d.fee) / (D - d.fee);
      const volume = buy ? amountIn : amountOut + fees;
      expect(line).toMatchObject({
        chainId: d.chainId,
        blockNumber: Number(block),
        integratorId: d.integratorId ?? '',
        pair: `WETH/${quote.symbol}`,
        side: buy ? 'buy' : 'sell',
        via: d.via,
        user: d.via === 'direct' ? s.testUser.address.toLowerCase() : executor,
        txFrom: s.testUser.address.toLowerCase(),
        amountIn: formatUnits(amountIn, buy ? quote.decimals : weth.decimals),
        amountOut: formatUnits(amountOut, buy ? weth.decimals : quote.decimals),
        fee: d.fee.toString(),
        volume: formatUnits(volume, quote.decimals),
        fees: formatUnits(fees, quote.decimals),
        reason: d.integratorId ? '' : 'no audit record of its signature',
      });
      expect(amountIn).toBe(d.amountIn);
      expect(amountOut).toBeGreaterThan(0n);
    }
    expect(report.unattributed.map((l) => l.txHash)).toEqual(
      done.filter((d) => !d.integratorId).map((d) => d.hash.toLowerCase()),
    );
    expect(report.unexamined).toEqual([]);
    expect(report.totals).toEqual({
      swaps: done.length,
      attributed: done.filter((d) => d.integratorId).length,
      listedApart: 2,
      unexaminedTransactions: 0,
    });
    // The reverted leg is no swap: its transaction has one line.
    expect(lines.filter((l) => l.txHash === revertedLegTx.toLowerCase()).map((l) => l.callIndex)).toEqual([0]);
    // The summary: per integrator, chain and pair, with the transactions behind each figure.
    expect(report.summary.map((s) => [s.integratorId, s.chainId, s.pair, s.swaps, s.transactions.length])).toEqual([
      ['alpha', 56, 'WETH/USDT', 1, 1],
      ['alpha', 8453, 'WETH/USDC', 2, 2],
      ['beta', 56, 'WETH/USDT', 1, 1],
      ['beta', 8453, 'WETH/USDC', 1, 1],
      // Nested 1, split 2, the signature used twice 2, the executed leg 1, the late one 1: in 5 transactions.
      ['gamma', 8453, 'WETH/USDC', 7, 5],
    ]);
    // Totals to the unit: each summary line is the sum of its swaps' figures, in the quote token's units.
    for (const sum of report.summary) {
      const mine = report.swaps.filter((l) => l.integratorId === sum.integratorId && l.chainId === sum.chainId);
      const dec = report.chains.find((ch) => ch.chainId === sum.chainId)!.quoteToken.decimals;
      expect(mine.reduce((t, l) => t + parseUnits(l.volume, dec), 0n)).toBe(parseUnits(sum.volume, dec));
      expect(mine.reduce((t, l) => t + parseUnits(l.fees, dec), 0n)).toBe(parseUnits(sum.fees, dec));
    }
    // Signals: gamma's signature used by two swaps for one request; the late swap over 10 s.
    expect(report.signals.find((g) => g.integratorId === 'gamma')).toMatchObject({
      excessSwaps: 1,
      reusedSignatures: [{ swaps: 2, requests: 1, transactions: [reusedTx.toLowerCase()] }],
    });
    const alpha8453 = report.summary.find((s) => s.integratorId === 'alpha' && s.chainId === 8453)!;
    expect(alpha8453.transactions).toEqual(
      done.filter((d) => d.integratorId === 'alpha' && d.chainId === 8453).map((d) => d.hash.toLowerCase()),
    );
    expect(report.chains.map((ch) => [ch.chainId, ch.quoteToken.symbol, ch.quoteToken.decimals])).toEqual([
      [56, 'USDT', 18],
      [8453, 'USDC', 6],
    ]);
  });

  it('behavior: the same range gives the same bytes (JSON and CSV), and a CSV row per integrator, chain and pair', async () => {
    const iso = (s: number) => new Date(s * 1000).toISOString();
    const args = ['--from', iso(fromSeconds), '--to', iso(toSeconds)];
    const a = await settle([...args, '--quiet']);
    const b = await settle([...args, '--quiet', '--span', '3']);
    // --quiet leaves the outcome, because gamma's signature carried a swap more than its requests.
    expect(a.err.filter((l) => !l.startsWith('settle: warning: '))).toEqual([
      "settle: 12 swaps attributed, 2 listed apart, 0 transactions not examined; 1 swaps beyond their signature's requests, 0 late (> 60 s)",
    ]);
    expect(b.out).toBe(a.out);
    const csv1 = await settle([...args, '--quiet', '--format', 'csv']);
    const csv2 = await settle([...args, '--quiet', '--format', 'csv']);
    expect(csv2.out).toBe(csv1.out);
    const rows = csv1.out.trimEnd().split('\n');
    expect(rows[0]).toBe('integratorId,chainId,pair,quoteToken,swaps,volume,fees,transactions');
    expect(rows).toHaveLength(6);
    expect(rows[2]).toMatch(/^alpha,8453,WETH\/USDC,USDC,2,[0-9.]+,[0-9.]+,0x[0-9a-f]{64} 0x[0-9a-f]{64}$/);
    const detail = await settle([...args, '--quiet', '--format', 'csv', '--detail']);
    expect(detail.out.trimEnd().split('\n')).toHaveLength(done.length + 1);
  });

  it('behavior: a period that starts before the oldest audit record gets a warning on standard error', async () => {
    const iso = (s: number) => new Date(s * 1000).toISOString();
    const early = await settle(['--from', iso(fromSeconds - 3_600), '--to', iso(toSeconds), '--quiet']);
    expect(early.code).toBe(0);
    for (const id of CHAINS) {
      expect(early.err).toContainEqual(
        expect.stringMatching(
          new RegExp(
            `^settle: warning: chain ${id}: the audit trail starts at \\S+; swaps signed before it are listed apart`,
          ),
        ),
      );
    }
  });

  it('behavior: audit tx names, for every swap of each transaction, the integrator that asked for its signature; the outside ones have none', async () => {
    for (const hash of [...new Set(done.map((d) => d.hash))]) {
      const mine = done.filter((d) => d.hash === hash);
      const chainId = mine[0]!.chainId;
      const human = await auditTx(chainId, hash);
      const json = await auditTx(chainId, hash, true);
      const parsed = JSON.parse(json.out[0]!) as {
        via: string;
        swaps: {
          reverted: boolean;
          caller: string;
          amountIn: string;
          amountOut: string | null;
          records: {
            integratorId: string;
            keyId: string;
            matchesCalldata: boolean;
            sameAmounts: boolean;
            amountIn: string;
          }[];
        }[];
      };
      expect(parsed.via).toBe(mine[0]!.via);
      const executed = parsed.swaps.filter((s) => !s.reverted);
      expect(executed).toHaveLength(mine.length);
      expect(human.code).toBe(mine.some((d) => !d.integratorId) ? 3 : 0);
      for (const d of mine) {
        const sw = executed[d.callIndex]!;
        expect(sw.amountIn).toBe(d.amountIn.toString());
        if (d.via === 'nested') {
          expect(sw.caller).toBe(executor);
          expect(sw.amountOut).toBe((await moved(d)).amountOut.toString());
        }
        if (!d.integratorId) {
          expect(sw.records).toEqual([]);
          expect(human.out.join('\n')).toContain('no audit record of this signature');
          continue;
        }
        // Alpha's two USDC → WETH swaps were asked for in the same second with the same fee: the
        // signature (which has no amount in it) is the same, so both requests are records of it.
        expect(sw.records.length).toBeGreaterThanOrEqual(1);
        for (const r of sw.records) expect(r).toMatchObject({ integratorId: d.integratorId, matchesCalldata: true });
        const exact = sw.records.filter((r) => r.sameAmounts);
        expect(exact).toHaveLength(1);
        expect(exact[0]!.amountIn).toBe(sw.amountIn);
        expect(apiKeys.get(d.integratorId)!.startsWith(exact[0]!.keyId)).toBe(true);
        expect(exact[0]!.keyId.length).toBeGreaterThan(4);
        expect(human.out.join('\n')).toContain(`asked for by integrator ${d.integratorId} (API key `);
      }
    }
    // The split route: both swaps named, each with its own request.
    const reverted = JSON.parse((await auditTx(8453, revertedLegTx, true)).out[0]!) as {
      swaps: { reverted: boolean }[];
    };
    expect(reverted.swaps.map((s) => s.reverted)).toEqual([false, true]);
    expect((await auditTx(8453, revertedLegTx)).out.join('\n')).toContain('swap 2 of 2, called by');
  });

  it('behavior: a swap executed long after signing is late; the figures go to a metrics file an operator can alert on', async () => {
    const iso = (x: number) => new Date(x * 1000).toISOString();
    const file = path.join(mkdtempSync(path.join(tmpdir(), 'settle-metrics-')), 'settle.prom');
    const run = await settle([
      '--from',
      iso(fromSeconds),
      '--to',
      iso(toSeconds),
      '--late-after',
      '10',
      '--metrics',
      file,
    ]);
    expect(run.code).toBe(0);
    const report = JSON.parse(run.out) as SettlementReport;
    const gamma = report.signals.find((g) => g.integratorId === 'gamma')!;
    expect(gamma.lateSwaps.map((l) => l.txHash)).toEqual([lateTx.toLowerCase()]);
    // 20 s of chain time after signing; the signing time is the signer's wall clock, a second or so apart.
    expect(gamma.lateSwaps[0]!.delaySeconds).toBeGreaterThan(10);
    expect(gamma.maxDelaySeconds).toBe(gamma.lateSwaps[0]!.delaySeconds);
    const metrics = readFileSync(file, 'utf8');
    expect(metrics).toContain('pmm_settlement_signature_excess_swaps{chain="8453",integrator="gamma"} 1\n');
    expect(metrics).toContain('pmm_settlement_late_swaps{chain="8453",integrator="gamma"} 1\n');
    expect(metrics).toContain('pmm_settlement_late_swaps{chain="8453",integrator="alpha"} 0\n');
    expect(metrics).toContain('pmm_settlement_unexamined_transactions{chain="8453"} 0\n');
    expect(metrics).toContain('pmm_settlement_period_ended{chain="8453"} 1\n');
    expect(metrics).toContain('pmm_settlement_swaps{chain="8453",integrator=""} 2\n');
    // Said on standard error even though nothing else is wrong: swaps beyond their signature's requests.
    expect(run.err).toContainEqual(
      expect.stringMatching(/1 swaps beyond their signature's requests, 1 late \(> 10 s\)$/),
    );
  });

  it("behavior: the block times of the router's transfers come with the logs (the node has blockTimestamp): no block request", async () => {
    const reader = createChainReader(8453, c(8453).stack.rpcUrl);
    try {
      const router = c(8453).stack.contracts.router;
      const to = await reader.latestBlock();
      const logs = await reader.transfers(router, 'to', 0, to);
      const blocks = [...new Set(logs.map((l) => l.blockNumber))];
      expect(blocks.length).toBeGreaterThan(5);
      for (const b of blocks) {
        const block = await c(8453).pub.getBlock({ blockNumber: BigInt(b) });
        expect(await reader.blockTime(b)).toBe(Number(block.timestamp));
      }
      expect(reader.calls.get('eth_getBlockByNumber')).toBeUndefined();
    } finally {
      reader.close();
    }
  });

  it('behavior: each tracer of the node (callTracer, trace_transaction, struct logs) gives the same report, byte for byte', async () => {
    const iso = (x: number) => new Date(x * 1000).toISOString();
    const args = ['--from', iso(fromSeconds), '--to', iso(toSeconds), '--format', 'csv', '--detail'];
    const auto = await settle(args);
    expect(auto.code).toBe(0);
    // Every swap, the nested ones included: a tracer that missed or invented a call would change the rows.
    expect(auto.out.trimEnd().split('\n')).toHaveLength(done.length + 1);
    for (const kind of ['callTracer', 'parity', 'structLogs']) {
      const run = await settle([...args, '--tracer', kind]);
      expect({ kind, code: run.code }).toEqual({ kind, code: 0 });
      expect(run.err).toContain(`settle: chain 8453: ${executorTxs.length} transactions traced with ${kind}`);
      expect(run.out).toBe(auto.out);
    }
  });

  it('behavior: a node whose only tracer is the struct logger: auto falls back to it and gives the same report', async () => {
    const proxy = await jsonRpcRelay(c(8453).stack.rpcUrl, structLogsOnly);
    const reader = createChainReader(8453, proxy.url);
    try {
      const iso = (x: number) => new Date(x * 1000).toISOString();
      const args = ['--from', iso(fromSeconds), '--to', iso(toSeconds)];
      const direct = await settle(args);
      const behind = await settle(args, new Map([[8453, reader]]));
      expect(behind.code).toBe(0);
      expect(behind.err).toContain(`settle: chain 8453: ${executorTxs.length} transactions traced with structLogs`);
      expect(behind.out).toBe(direct.out);
      const report = JSON.parse(behind.out) as SettlementReport;
      expect(report.unexamined).toEqual([]);
      expect(report.totals.swaps).toBe(done.length);
    } finally {
      reader.close();
      await proxy.close();
    }
  });

  it('error: a node without tracing: the executor transactions are listed apart with the reason, counted in the totals and on standard error, the report incomplete (exit 3); direct swaps are still settled', async () => {
    const proxy = await jsonRpcRelay(c(8453).stack.rpcUrl, withoutTracing);
    const reader = createChainReader(8453, proxy.url);
    try {
      const iso = (x: number) => new Date(x * 1000).toISOString();
      const run = await settle(
        ['--from', iso(fromSeconds), '--to', iso(toSeconds), '--quiet'],
        new Map([[8453, reader]]),
      );
      expect(run.code).toBe(SETTLE_INCOMPLETE);
      const report = JSON.parse(run.out) as SettlementReport;
      expect(report.complete).toBe(false);
      expect(report.unexamined.map((u) => u.txHash)).toEqual(executorTxs.map((h) => h.toLowerCase()));
      for (const u of report.unexamined)
        expect(u.reason).toBe(
          'needs a node with debug_traceTransaction (callTracer or the default struct logger) or trace_transaction',
        );
      const direct = done.filter((d) => d.via === 'direct');
      expect(report.totals).toEqual({
        swaps: direct.length,
        attributed: direct.filter((d) => d.integratorId).length,
        listedApart: 1,
        unexaminedTransactions: executorTxs.length,
      });
      expect(report.summary.map((x) => x.integratorId)).not.toContain('gamma');
      expect(run.err).toContainEqual(
        expect.stringMatching(
          new RegExp(
            `^settle: warning: chain 8453: ${executorTxs.length} transactions that touched the router could not be examined`,
          ),
        ),
      );
      const csv = await settle(
        ['--from', iso(fromSeconds), '--to', iso(toSeconds), '--quiet', '--format', 'csv', '--detail'],
        new Map([[8453, reader]]),
      );
      expect(csv.out.trimEnd().split('\n')).toHaveLength(1 + report.totals.swaps + executorTxs.length);
      // audit tx says why it cannot answer.
      const audit = await runAuditCommand(['tx', '8453', executorTxs[0]!], {
        trail: new AuditReader(operator, keys),
        chain: () => ({ reader, router: c(8453).stack.contracts.router }),
        out: () => undefined,
        err: (l) => expect(l).toMatch(/does not call the router itself and needs a node with debug_traceTransaction/),
      });
      expect(audit).toBe(1);
    } finally {
      reader.close();
      await proxy.close();
    }
  });

  it('error: audit tx on a transaction that is not a swap, an unknown hash, a bad chain', async () => {
    const approve = await c(8453).user.writeContract({
      address: c(8453).stack.quoteToken.address as Hex,
      abi: erc20Abi,
      functionName: 'approve',
      args: [c(8453).stack.contracts.router as Hex, 1n],
    });
    await minedReceipt(c(8453).pub, approve);
    const notSwap = await auditTx(8453, approve);
    expect(notSwap.code).toBe(1);
    expect(notSwap.err[0]).toMatch(/holds no call of the router's swap\(\.\.\.\)/);
    const unknown = await auditTx(8453, `0x${'ab'.repeat(32)}`);
    expect(unknown).toMatchObject({
      code: 1,
      err: [`audit: transaction 0x${'ab'.repeat(32)} not found on chain 8453`],
    });
    const bad = await auditTx(1, approve);
    expect(bad.code).toBe(2);
  });
});
