/**
 * settle against a node that fails: a JSON-RPC relay in front of a real anvil (testkit's
 * startSystem, chains only) that answers HTTP 503 to the traces of one transaction for a while,
 * as a node behind a balancer does while it restarts or sheds load, or refuses tracing outright.
 * On the chain: a direct swap, a swap through an executor and a split route (two swaps in one
 * transaction), signed with the chain's key. A failure that passes must cost no swap; one that
 * does not pass must leave a report that says it is incomplete (exit 3, `complete: false`, a row
 * in the csv summary), never one that looks complete without the transaction; so must a period
 * the node has no block past yet (not over, or the node lags behind the chain).
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Contract, ContractFactory, JsonRpcProvider, MaxUint256, NonceManager, Wallet } from 'ethers';
import { TestExecutorArtifact, TestTokenArtifact } from '@pmm/contracts';
import { createDigestSigner } from '@pmm/core';
import type { ChainStack } from '@pmm/devnet';
import { encodeSwapCalldata, signSwapQuote } from '@pmm/protocol';
import {
  jsonRpcRelay,
  startSystem,
  withoutTracing,
  type JsonRpcFault,
  type JsonRpcRequest,
  type System,
} from '@pmm/testkit';
import {
  SETTLE_INCOMPLETE,
  createChainReader,
  csvLine,
  runSettleCommand,
  scanSwaps,
  type SettlementReport,
} from '../src';
import { TracerChoice } from '../src/chain/call-trace';
import { NOT_ENDED_ROW, NOT_EXAMINED_ROW } from '../src/settle/settlement-output';

jest.setTimeout(120_000);

const CHAIN = 8453;
let sys: System;
let s: ChainStack;
/** The split route's transaction: the one whose traces fail. */
let splitTx: string;
/** The transactions that need a trace: through the executor, then the split route. */
let executorTxs: string[] = [];
let fromSeconds = 0;
let toSeconds = 0;

beforeAll(async () => {
  sys = await startSystem({ chains: [CHAIN], blockIntervalMs: 0, services: [] });
  s = sys.chain(CHAIN);
  // No request cache: 'latest' read within 250 ms of the last read would be the block before (the period's end).
  const provider = new JsonRpcProvider(s.rpcUrl, CHAIN, { staticNetwork: true, cacheTimeout: -1 });
  const user = new NonceManager(new Wallet(s.testUser.privateKey, provider));
  const executor = (await new ContractFactory(TestExecutorArtifact.abi, TestExecutorArtifact.bytecode, user).deploy(
    s.contracts.router,
  )) as unknown as Contract;
  await executor.waitForDeployment();
  const executorAddress = (await executor.getAddress()).toLowerCase();
  const quote = s.quoteToken.address.toLowerCase();
  const weth = s.tokens.WETH!.address.toLowerCase();
  for (const spender of [s.contracts.router, executorAddress])
    await (await new Contract(quote, TestTokenArtifact.abi, user).getFunction('approve')(spender, MaxUint256)).wait();
  const signer = createDigestSigner(s.apiSigner.privateKey);
  const unit = 10n ** BigInt(s.quoteToken.decimals);
  let fee = 0n;
  const leg = async (who: string) => {
    const timestamp = BigInt((await provider.getBlock('latest'))!.timestamp);
    fee += 1n; // distinct signatures
    const fields = { tokenIn: quote, tokenOut: weth, timestamp, fee, originRate: 0n, userAddress: who };
    return [quote, unit, weth, 0n, timestamp, signSwapQuote(signer, fields).verificationData] as const;
  };
  // The period starts with the first swap's block (blocks mined in one second may share a timestamp).
  fromSeconds = Number((await provider.getBlock('latest'))!.timestamp) + 1;
  await provider.send('evm_setNextBlockTimestamp', [fromSeconds]);
  const [t, a, o, m, ts, vd] = await leg(s.testUser.address.toLowerCase());
  const data = encodeSwapCalldata({
    tokenIn: t,
    amountIn: a,
    tokenOut: o,
    minAmountOut: m,
    quoteTimestamp: ts,
    verificationData: vd,
  });
  await (await user.sendTransaction({ to: s.contracts.router, data })).wait();
  const one = await (await executor.getFunction('swapOne')(await leg(executorAddress))).wait();
  const split = await executor.getFunction('swapBatch')(
    [await leg(executorAddress), await leg(executorAddress)],
    false,
  );
  splitTx = (await split.wait()).hash.toLowerCase();
  executorTxs = [one.hash.toLowerCase(), splitTx];
  toSeconds = Number((await provider.getBlock('latest'))!.timestamp) + 1;
  // A block at the period's end: the period is over on the node.
  await provider.send('evm_mine', [toSeconds]);
  provider.destroy();
});

afterAll(async () => {
  await sys?.stop();
});

/** Answers 503 to the first `times` traces of the split route's transaction; counts them all. */
function splitTraceFails(times: number) {
  const seen = { traces: 0 };
  const fault = (r: JsonRpcRequest): JsonRpcFault => {
    if (r.method !== 'debug_traceTransaction' || String(r.params?.[0]).toLowerCase() !== splitTx) return 'pass';
    seen.traces += 1;
    return seen.traces <= times ? 'unavailable' : 'pass';
  };
  return { seen, fault };
}

const noLookup = { bySignature: async () => [], oldest: async () => undefined };

const iso = (x: number) => new Date(x * 1000).toISOString();

async function settleThrough(url: string, extra: string[] = [], to = toSeconds) {
  const reader = createChainReader(CHAIN, url);
  const out: string[] = [];
  const err: string[] = [];
  try {
    const code = await runSettleCommand(['--from', iso(fromSeconds), '--to', iso(to), '--quiet', ...extra], {
      lookup: noLookup,
      chains: [CHAIN],
      chain: () => ({ reader, router: s.contracts.router, helper: s.contracts.helper }),
      out: (x) => out.push(x),
      err: (l) => err.push(l),
    });
    return { code, out: out.join(''), err };
  } finally {
    reader.close();
  }
}

describe('settle against a node that fails', () => {
  it('behavior: traces that fail for longer than the reader retries (a node restarting) are tried again: every swap is found', async () => {
    // The reader tries each request 4 times within two seconds: 6 failures outlast that.
    const { seen, fault } = splitTraceFails(6);
    const relay = await jsonRpcRelay(s.rpcUrl, fault);
    try {
      const run = await settleThrough(relay.url);
      const report = JSON.parse(run.out) as SettlementReport;
      expect(report.unexamined).toEqual([]);
      expect({ code: run.code, complete: report.complete, swaps: report.totals.swaps }).toEqual({
        code: 0,
        complete: true,
        swaps: 4,
      });
      expect(seen.traces).toBe(7);
    } finally {
      await relay.close();
    }
  });

  it('error: a trace that keeps failing: the transaction is listed apart after every round, with what the node answered', async () => {
    const { seen, fault } = splitTraceFails(Infinity);
    const relay = await jsonRpcRelay(s.rpcUrl, fault);
    const reader = createChainReader(CHAIN, relay.url);
    try {
      const latest = await reader.latestBlock();
      const scan = await scanSwaps({
        reader,
        router: s.contracts.router,
        fromBlock: 0,
        toBlock: latest,
        tracer: new TracerChoice('auto'),
        retryDelaysMs: [10, 10],
      });
      expect(scan.swaps).toHaveLength(2);
      expect(scan.unexamined.map((u) => [u.txHash, u.reason])).toEqual([
        [splitTx, expect.stringMatching(/^the node could not trace it: .*503/)],
      ]);
      // The first try and two rounds, each the reader's 4 attempts.
      expect(seen.traces).toBe(12);
    } finally {
      reader.close();
      await relay.close();
    }
  });

  it('error: a node without tracing: the report is written but incomplete (exit 3, complete false, a csv row), never one that looks complete', async () => {
    const relay = await jsonRpcRelay(s.rpcUrl, withoutTracing);
    try {
      const json = await settleThrough(relay.url);
      expect(json.code).toBe(SETTLE_INCOMPLETE);
      const report = JSON.parse(json.out) as SettlementReport;
      expect(report.complete).toBe(false);
      expect(report.totals).toMatchObject({ swaps: 1, unexaminedTransactions: 2 });
      expect(json.err).toContainEqual(expect.stringMatching(/the report is INCOMPLETE$/));
      const csv = await settleThrough(relay.url, ['--format', 'csv']);
      expect(csv.code).toBe(SETTLE_INCOMPLETE);
      const rows = csv.out.trimEnd().split('\n');
      expect(rows[rows.length - 1]).toBe(csvLine([NOT_EXAMINED_ROW, CHAIN, '', '', '', '', '', executorTxs.join(' ')]));
    } finally {
      await relay.close();
    }
  });

  it('error: a period the node has no block past yet (not over, or the node lags): every swap so far, but the report is incomplete', async () => {
    // Ends an hour after the node's last block: a block of the period may still come.
    const run = await settleThrough(s.rpcUrl, [], toSeconds + 3_600);
    expect(run.code).toBe(SETTLE_INCOMPLETE);
    const report = JSON.parse(run.out) as SettlementReport;
    expect(report.totals.swaps).toBe(4);
    expect({ complete: report.complete, periodEnded: report.chains[0]!.periodEnded }).toEqual({
      complete: false,
      periodEnded: false,
    });
    expect(run.err).toContainEqual(
      `settle: warning: chain ${CHAIN}: the node has no block at or after ${iso(toSeconds + 3_600)} yet ` +
        `(the period is not over, or the node lags): swaps in later blocks of the period are missing`,
    );
    const metricsFile = path.join(mkdtempSync(path.join(tmpdir(), 'settle-metrics-')), 'settle.prom');
    const csv = await settleThrough(s.rpcUrl, ['--format', 'csv', '--metrics', metricsFile], toSeconds + 3_600);
    expect(readFileSync(metricsFile, 'utf8')).toContain(`pmm_settlement_period_ended{chain="${CHAIN}"} 0\n`);
    rmSync(path.dirname(metricsFile), { recursive: true, force: true });
    expect(csv.code).toBe(SETTLE_INCOMPLETE);
    expect(csv.out.trimEnd().split('\n').pop()).toBe(csvLine([NOT_ENDED_ROW, CHAIN, '', '', '', '', '', '']));
    // Over once the node has a block at the end: the same period is complete.
    const ended = await settleThrough(s.rpcUrl);
    expect(ended.code).toBe(0);
    expect((JSON.parse(ended.out) as SettlementReport).complete).toBe(true);
  });
});
