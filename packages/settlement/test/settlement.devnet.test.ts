/**
 * Audit trail and settlement end to end on the devnet: two integrators swap on two chains through
 * the gateway and the signer (real Redis, real Hardhat chains with the reference router), one
 * swap is signed outside the service. Then `settle` must report every swap one by one (amounts
 * read back here with viem from the receipts, independently of the code under test), attribute
 * each to the integrator that asked, list the outside one apart, and give the same bytes twice;
 * `audit tx` must name the right integrator for each transaction.
 */
import request from 'supertest';
import {
  parseEventLogs,
  type Account,
  type Chain,
  type Hex,
  type PublicClient,
  type Transport,
  type WalletClient,
} from 'viem';
import { TestTokenArtifact } from '@pmm/contracts';
import { createDigestSigner, createLogger } from '@pmm/core';
import { encodeSwapCalldata, formatUnits, signSwapQuote } from '@pmm/protocol';
import { startDevnet, type ChainStack, type Devnet } from '@pmm/devnet';
import type { Gateway } from '@pmm/gateway';
import {
  AuditReader,
  createChainReader,
  loadSignerConfig,
  runAuditCommand,
  runSettleCommand,
  startSigner,
  type ChainReader,
  type RunningSigner,
  type SettlementReport,
} from '../src';
import { chainClients } from '../../devnet/test/support/chain-clients';
import { REDIS_URL, harness, type Harness } from '../../../services/gateway/test/support/harness';
import { stackRegistry } from '../../../services/signer/test/support/fixture';

jest.setTimeout(240_000);

const CHAINS = [8453, 56] as const;
const INTERNAL_TOKEN = 'settle-e2e-internal-token-0123456789';
const erc20Abi = TestTokenArtifact.abi;

interface ChainCtx {
  stack: ChainStack;
  pub: PublicClient;
  user: WalletClient<Transport, Chain, Account>;
  reader: ChainReader;
}

let devnet: Devnet;
let h: Harness;
let signer: RunningSigner;
let gw: Gateway;
const ctx = new Map<number, ChainCtx>();
const apiKeys = new Map<string, string>();
const c = (id: number) => ctx.get(id)!;

/** What the test did, per transaction: who asked (undefined: signed outside the service). */
interface Done {
  chainId: number;
  hash: Hex;
  integratorId: string | undefined;
  fee: bigint;
  tokenIn: string;
  tokenOut: string;
}
const done: Done[] = [];
let fromSeconds = 0;
let toSeconds = 0;

beforeAll(async () => {
  devnet = await startDevnet({ chains: [...CHAINS], blockIntervalMs: 0 });
  h = await harness();
  for (const id of CHAINS) {
    const stack = devnet.stack.chains[String(id)]!;
    const clients = chainClients(stack);
    ctx.set(id, {
      stack,
      pub: clients.publicClient,
      user: clients.wallet(stack.testUser.privateKey),
      reader: createChainReader(id, stack.rpcUrl),
    });
    // The pair registry as the indexer writes it (the sign path needs nothing else from it).
    await h.redis.set(h.keys.pairs(id), JSON.stringify(stackRegistry(stack)));
  }
  signer = await startSigner(
    loadSignerConfig({
      env: {
        PORT: '0',
        REDIS_URL,
        REDIS_KEY_PREFIX: h.prefix,
        INTERNAL_TOKEN,
        SERVED_CHAINS: CHAINS.join(','),
        SIGNER_KEY_8453: c(8453).stack.apiSigner.privateKey,
        SIGNER_KEY_56: c(56).stack.apiSigner.privateKey,
        LOG_LEVEL: 'error',
      },
      file: {},
    }),
    createLogger({ service: 'settle-e2e', level: 'error', silent: true }),
  );
  gw = await h.gateway({
    signerUrl: `http://127.0.0.1:${signer.served.port}`,
    internalToken: INTERNAL_TOKEN,
    servedChains: [...CHAINS],
  });
  const whitelist = CHAINS.map((id) => c(id).stack.testUser.address.toLowerCase());
  for (const id of ['alpha', 'beta']) apiKeys.set(id, await h.apiKey({ id, whitelist }));
}, 240_000);

afterAll(async () => {
  for (const x of ctx.values()) x.reader.close();
  await signer?.close();
  await h?.cleanup();
  await devnet?.stop();
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
  await x.pub.waitForTransactionReceipt({ hash: approveHash });
  const hash = await x.user.sendTransaction({ to: x.stack.contracts.router as Hex, data: calldata });
  expect((await x.pub.waitForTransactionReceipt({ hash })).status).toBe('success');
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
  const res = await request(gw.app)
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
  done.push({ chainId, hash, integratorId, fee, tokenIn: tokenIn.toLowerCase(), tokenOut: tokenOut.toLowerCase() });
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
    integratorId: undefined,
    fee,
    tokenIn: tokenIn.toLowerCase(),
    tokenOut: tokenOut.toLowerCase(),
  });
}

/** amountIn and amountOut of a swap, from its receipt's Transfer logs (viem). */
async function moved(d: Done): Promise<{ amountIn: bigint; amountOut: bigint; block: bigint }> {
  const x = c(d.chainId);
  const receipt = await x.pub.getTransactionReceipt({ hash: d.hash });
  const router = x.stack.contracts.router.toLowerCase();
  const logs = parseEventLogs({ abi: erc20Abi, eventName: 'Transfer', logs: receipt.logs }) as unknown as {
    address: string;
    args: { from: string; to: string; value: bigint };
  }[];
  let amountIn = 0n;
  let amountOut = 0n;
  for (const l of logs) {
    if (l.address.toLowerCase() === d.tokenIn && l.args.to.toLowerCase() === router) amountIn += l.args.value;
    if (l.address.toLowerCase() === d.tokenOut && l.args.from.toLowerCase() === router) amountOut += l.args.value;
  }
  return { amountIn, amountOut, block: receipt.blockNumber };
}

function settleDeps(out: string[], err: string[]) {
  return {
    lookup: new AuditReader(h.redis, h.keys),
    chains: [...CHAINS],
    chain: (id: number) => ({
      reader: c(id).reader,
      router: c(id).stack.contracts.router,
      helper: c(id).stack.contracts.helper,
    }),
    out: (t: string) => out.push(t),
    err: (l: string) => err.push(l),
  };
}

async function settle(args: string[]): Promise<{ code: number; out: string; err: string[] }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runSettleCommand(args, settleDeps(out, err));
  return { code, out: out.join(''), err };
}

async function auditTx(chainId: number, hash: string, json = false) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runAuditCommand(['tx', String(chainId), hash, ...(json ? ['--json'] : [])], {
    trail: new AuditReader(h.redis, h.keys),
    chain: (id) => ({ reader: c(id).reader, router: c(id).stack.contracts.router }),
    out: (l) => out.push(l),
    err: (l) => err.push(l),
  });
  return { code, out, err };
}

describe('settlement and audit on the devnet', () => {
  beforeAll(async () => {
    fromSeconds = Math.max(...(await Promise.all(CHAINS.map(latestTime)))) + 1;
    // Blocks of this test come after every block so far (timestamps never decrease).
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
    toSeconds = Math.max(...(await Promise.all(CHAINS.map(latestTime)))) + 1;
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

    const lines = [...report.swaps, ...report.unattributed];
    expect(lines).toHaveLength(done.length);
    const D = 100_000n;
    for (const d of done) {
      const line = lines.find((l) => l.txHash === d.hash.toLowerCase());
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
        user: s.testUser.address.toLowerCase(),
        amountIn: formatUnits(amountIn, buy ? quote.decimals : weth.decimals),
        amountOut: formatUnits(amountOut, buy ? weth.decimals : quote.decimals),
        fee: d.fee.toString(),
        volume: formatUnits(volume, quote.decimals),
        fees: formatUnits(fees, quote.decimals),
        reason: d.integratorId ? '' : 'no audit record of its signature',
      });
      expect(amountIn).toBeGreaterThan(0n);
      expect(amountOut).toBeGreaterThan(0n);
    }
    expect(report.unattributed.map((l) => l.txHash)).toEqual(
      done.filter((d) => !d.integratorId).map((d) => d.hash.toLowerCase()),
    );
    // The summary: per integrator, chain and pair, with the transactions behind each figure.
    expect(report.summary.map((s) => [s.integratorId, s.chainId, s.pair, s.swaps, s.transactions.length])).toEqual([
      ['alpha', 56, 'WETH/USDT', 1, 1],
      ['alpha', 8453, 'WETH/USDC', 2, 2],
      ['beta', 56, 'WETH/USDT', 1, 1],
      ['beta', 8453, 'WETH/USDC', 1, 1],
    ]);
    const alpha8453 = report.summary.find((s) => s.integratorId === 'alpha' && s.chainId === 8453)!;
    expect(alpha8453.transactions).toEqual(
      done.filter((d) => d.integratorId === 'alpha' && d.chainId === 8453).map((d) => d.hash.toLowerCase()),
    );
    const sum = (xs: string[]) => xs.reduce((t, x) => t + Number(x), 0);
    const alphaLines = report.swaps.filter((l) => l.integratorId === 'alpha' && l.chainId === 8453);
    expect(Number(alpha8453.volume)).toBeCloseTo(sum(alphaLines.map((l) => l.volume)), 6);
    expect(Number(alpha8453.fees)).toBeCloseTo(sum(alphaLines.map((l) => l.fees)), 6);
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
    expect(a.err.filter((l) => !l.startsWith('settle: warning: '))).toEqual([]);
    expect(b.out).toBe(a.out);
    const csv1 = await settle([...args, '--quiet', '--format', 'csv']);
    const csv2 = await settle([...args, '--quiet', '--format', 'csv']);
    expect(csv2.out).toBe(csv1.out);
    const rows = csv1.out.trimEnd().split('\n');
    expect(rows[0]).toBe('integratorId,chainId,pair,quoteToken,swaps,volume,fees,transactions');
    expect(rows).toHaveLength(5);
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

  it('behavior: audit tx names the integrator that asked for each transaction’s signature; the outside one has none', async () => {
    for (const d of done) {
      const human = await auditTx(d.chainId, d.hash);
      const json = await auditTx(d.chainId, d.hash, true);
      if (d.integratorId) {
        expect(human.code).toBe(0);
        expect(human.out.join('\n')).toContain(`asked for by integrator ${d.integratorId} (API key `);
        const parsed = JSON.parse(json.out[0]!) as {
          swap: { amountIn: string };
          records: {
            integratorId: string;
            keyId: string;
            matchesCalldata: boolean;
            sameAmounts: boolean;
            amountIn: string;
          }[];
        };
        // Alpha's two USDC → WETH swaps were asked for in the same second with the same fee: the
        // signature (which has no amount in it) is the same, so both requests are records of it.
        expect(parsed.records.length).toBeGreaterThanOrEqual(1);
        for (const r of parsed.records)
          expect(r).toMatchObject({ integratorId: d.integratorId, matchesCalldata: true });
        const exact = parsed.records.filter((r) => r.sameAmounts);
        expect(exact).toHaveLength(1);
        expect(exact[0]!.amountIn).toBe(parsed.swap.amountIn);
        expect(apiKeys.get(d.integratorId)!.startsWith(exact[0]!.keyId)).toBe(true);
        expect(exact[0]!.keyId.length).toBeGreaterThan(4);
        expect(human.out.join('\n')).toMatch(/, for these amounts/);
      } else {
        expect(human.code).toBe(3);
        expect(human.out.join('\n')).toContain('no audit record of this signature');
      }
    }
  });

  it('error: audit tx on a transaction that is not a swap, an unknown hash, a bad chain', async () => {
    const approve = await c(8453).user.writeContract({
      address: c(8453).stack.quoteToken.address as Hex,
      abi: erc20Abi,
      functionName: 'approve',
      args: [c(8453).stack.contracts.router as Hex, 1n],
    });
    await c(8453).pub.waitForTransactionReceipt({ hash: approve });
    const notSwap = await auditTx(8453, approve);
    expect(notSwap.code).toBe(1);
    expect(notSwap.err[0]).toMatch(/is not a call of swap\(\.\.\.\)/);
    const unknown = await auditTx(8453, `0x${'ab'.repeat(32)}`);
    expect(unknown).toMatchObject({
      code: 1,
      err: [`audit: transaction 0x${'ab'.repeat(32)} not found on chain 8453`],
    });
    const bad = await auditTx(1, approve);
    expect(bad.code).toBe(2);
  });
});
