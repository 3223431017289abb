/**
 * The maker's ledger end to end on the devnet (processes as `npm start` runs them: indexer,
 * signer, gateway and the ledger, testkit's startSystem, one anvil chain mining a block a second,
 * a still market moved only by this test). Two integrators swap through the gateway: `informed`,
 * after each of whose swaps the test raises the curve's mid by 1 % (the market moves in its
 * favour, against the maker), and `random`, whose swaps land with the market still. `npm run
 * markouts` must then show every swap attributed to its integrator, with markouts equal to those
 * computed here independently from the router's curve at those blocks (getCurve, read with viem)
 * and the swaps' own Transfer logs: the informed flow's negative for the maker, the random flow's
 * near zero (the maker's half spread). An aggregator's split route (two legs in one transaction
 * through an executor contract) is attributed like the settlement does it. A reorg (anvil's
 * snapshot and revert) removes the orphaned swap; the ledger killed mid-stream and started again
 * resumes without a gap or a duplicate.
 */
import { TestExecutorArtifact, TestTokenArtifact } from '@pmm/contracts';
import {
  DEFAULT_KEY_PREFIX,
  createRedis,
  ledgerEnv,
  parseLedgerEntry,
  redisKeys,
  redisReady,
  type LedgerEntry,
  type RedisClient,
} from '@pmm/core';
import { deployerWallet, type ChainStack } from '@pmm/devnet';
import { ApiKeyStore } from '@pmm/gateway';
import type { MarkoutReport } from '@pmm/operator';
import {
  chainClients,
  curveOf,
  freePort,
  moveCurveMid,
  spawnService,
  until,
  type ServiceProcess,
  type System,
} from '@pmm/testkit';
import request from 'supertest';
import {
  parseEventLogs,
  toHex,
  type Abi,
  type Account,
  type Chain,
  type Hex,
  type PublicClient,
  type Transport,
  type WalletClient,
} from 'viem';
import {
  dayFromNow as day,
  ledgerCursorOf,
  markoutsCommand,
  startLedgerSystem,
  type MarkoutsCommand,
} from '../support/ledger-devnet';

jest.setTimeout(300_000);

const CHAIN = 8453;
const keys = redisKeys(DEFAULT_KEY_PREFIX);
const erc20Abi = TestTokenArtifact.abi as Abi;

let sys: System;
/** The records' server (integrators, keys, the ledger), as its administrator. */
let redis: RedisClient;
/** `npm run markouts`, as the operator's Redis user. */
let markoutsCli: MarkoutsCommand;
let stack: ChainStack;
let pub: PublicClient;
let user: WalletClient<Transport, Chain, Account>;
let owner: WalletClient<Transport, Chain, Account>;
let weth: Hex;
let quote: Hex;
const apiKeys = new Map<string, string>();
let ledgerProcess: ServiceProcess;

/** A swap the test made: who asked, its transaction and call. */
interface Made {
  integratorId: string;
  /** The maker's side: `ask` when the user paid quote for WETH. */
  side?: 'bid' | 'ask';
  txHash: Hex;
  callIndex: number;
  via: 'direct' | 'nested';
}
const made: Made[] = [];

beforeAll(async () => {
  sys = await startLedgerSystem(CHAIN);
  stack = sys.chain(CHAIN);
  ledgerProcess = sys.processesOf('ledger')[0]!;
  const clients = chainClients(stack);
  pub = clients.publicClient;
  user = clients.wallet(stack.testUser.privateKey);
  owner = clients.wallet(deployerWallet().privateKey);
  weth = stack.tokens.WETH!.address as Hex;
  quote = stack.quoteToken.address as Hex;
  redis = createRedis(sys.redisRecordsUrl, { name: 'ledger-e2e' });
  await redisReady(redis);
  markoutsCli = await markoutsCommand(sys, keys);
  const store = new ApiKeyStore(redis, DEFAULT_KEY_PREFIX);
  const apiKey = async (id: string, whitelist: string[]) => {
    await store.putIntegrator({
      id,
      name: id,
      whitelist,
      chains: [],
      rateLimit: { requests: 100_000, windowSeconds: 60 },
      disabled: false,
    });
    return (await store.issueKey(id)).apiKey;
  };
  for (const id of ['informed', 'random']) apiKeys.set(id, await apiKey(id, [stack.testUser.address.toLowerCase()]));
  for (const token of [quote, weth]) await confirm(approve(token, stack.contracts.router as Hex));
});

afterAll(async () => {
  redis?.disconnect();
  await markoutsCli?.close();
  await sys?.stop();
});

const approve = (token: Hex, spender: Hex) =>
  user.writeContract({ address: token, abi: erc20Abi, functionName: 'approve', args: [spender, 2n ** 255n] });
async function confirm(sent: Promise<Hex> | Hex): Promise<{ blockNumber: bigint; hash: Hex }> {
  const hash = await sent;
  const receipt = await pub.waitForTransactionReceipt({ hash });
  expect(receipt.status).toBe('success');
  return { blockNumber: receipt.blockNumber, hash };
}

async function sign(integratorId: string, body: Record<string, unknown>) {
  const res = await request(sys.gateway.url)
    .post('/v2/swap/sign')
    .set('X-API-KEY', apiKeys.get(integratorId)!)
    .set('Content-Type', 'application/json')
    .send(JSON.stringify({ chainId: CHAIN, fee: '10', userAddress: stack.testUser.address, ...body }));
  // The body too: a refusal's code says why (a 503 was seen once in a full run, its reason not kept).
  expect({ status: res.status, body: res.body as unknown }).toMatchObject({ status: 200 });
  return res.body as { calldata: Hex; verificationData: Hex; timestamp: number | string };
}

/** One swap through the gateway, executed by the test user: quote in (the maker sells WETH) or WETH in. */
async function swap(integratorId: string, tokenIn: Hex, amountIn: bigint): Promise<bigint> {
  const tokenOut = tokenIn === quote ? weth : quote;
  const signed = await sign(integratorId, { tokenIn, tokenOut, amountIn: amountIn.toString() });
  const receipt = await confirm(user.sendTransaction({ to: stack.contracts.router as Hex, data: signed.calldata }));
  made.push({
    integratorId,
    side: tokenIn === quote ? 'ask' : 'bid',
    txHash: receipt.hash,
    callIndex: 0,
    via: 'direct',
  });
  return receipt.blockNumber;
}

const router = () => ({ pub, owner, router: stack.contracts.router });
const curveMid = async (blockNumber?: bigint): Promise<bigint> =>
  (await curveOf(router(), weth, blockNumber)).midPriceX18;

/** Moves WETH's curve mid by `factorPpm` (1_010_000: +1 %), other fields as seeded. */
const moveCurve = (factorPpm: bigint) => moveCurveMid(router(), weth, factorPpm);

const ledgerEntries = async (): Promise<LedgerEntry[]> =>
  (await redis.zrange(keys.ledger(CHAIN), 0, -1)).map((json) => parseLedgerEntry(json));
const ledgerCursor = () => ledgerCursorOf(redis, keys, CHAIN);
const waitForLedger = (block: bigint) => until(async () => (await ledgerCursor()) >= Number(block), 60_000);

/** The human mid of a curve mid (quote per WETH). */
const human = (midX18: bigint) =>
  (Number(midX18) * 10 ** stack.tokens.WETH!.decimals) / 10 ** stack.quoteToken.decimals / 1e18;

const markouts = (argv: string[]) => markoutsCli.run(argv);

describe('the ledger and its markouts', () => {
  it('behavior: informed and random flow, attributed, with markouts equal to those of the curves at those blocks', async () => {
    // Started before any swap: the ledger holds every block from its first head.
    await waitForLedger((await pub.getBlockNumber()) - 1n);
    // Each integrator asks for its own amounts: two identical requests signed in the same second
    // get the very same signature, which no one can then attribute (the settlement's rule).
    const thousand = 1_000n * 10n ** BigInt(stack.quoteToken.decimals);
    await swap('random', quote, thousand);
    await swap('informed', quote, thousand + 1n);
    await moveCurve(1_010_000n);
    await swap('random', weth, 10n ** 17n);
    const lastSwap = await swap('informed', quote, thousand + 1n);
    await moveCurve(1_010_000n);
    // Every swap's horizons up to 25 blocks and 12 s: 12 s of the chain's clock after the last
    // swap (a block a second), then the rest of its 25 blocks mined at once. anvil stamps those
    // with the time of the moment, as an interval block would be: the chain's clock keeps to the
    // wall's, which the head guard holds it to. The curve moves no more, so the indexer may skip
    // some of them (as when busy) with no book changed.
    const lastSwapTime = Number((await pub.getBlock({ blockNumber: lastSwap })).timestamp);
    await until(async () => Number((await pub.getBlock()).timestamp) > lastSwapTime + 12, 60_000, '12 s', 250);
    const last = lastSwap + 26n;
    const head = await pub.getBlockNumber();
    if (head < last) await pub.request({ method: 'anvil_mine' as never, params: [toHex(last - head)] as never });
    await waitForLedger(last);

    const json = ['--from', day(-1), '--to', day(1), '--format', 'json', '--chain', '8453'];
    const reached = (r: MarkoutReport) =>
      r.swaps.every((s) => s.markoutsBps['25b'] !== null && s.markoutsBps['12s'] !== null);
    const report = await until(
      async () => {
        const { code, out } = await markouts(json);
        expect(code).toBe(0);
        const r = JSON.parse(out) as MarkoutReport;
        return reached(r) && r;
      },
      30_000,
      "the mid history at every swap's 25 blocks and 12 s",
      250,
    );
    expect(report.swaps.map((s) => [s.txHash, s.integratorId])).toEqual(
      made.map((m) => [m.txHash.toLowerCase(), m.integratorId]),
    );
    for (const s of report.swaps) {
      // Independently: the execution price from the swap's Transfer logs, the mid from the curve.
      const receipt = await pub.getTransactionReceipt({ hash: s.txHash as Hex });
      const transfers = parseEventLogs({ abi: erc20Abi, logs: receipt.logs, eventName: 'Transfer' }) as unknown as {
        address: string;
        args: { value: bigint };
      }[];
      const moved = (token: string) =>
        transfers.find((t) => t.address.toLowerCase() === token.toLowerCase())!.args.value;
      const price =
        Number(moved(quote)) /
        10 ** stack.quoteToken.decimals /
        (Number(moved(weth)) / 10 ** stack.tokens.WETH!.decimals);
      const side = s.side === 'bid' ? 1 : -1;
      expect(s.side).toBe(made.find((m) => m.txHash.toLowerCase() === s.txHash)!.side);
      expect(Number(s.executionPrice)).toBeCloseTo(price, 6);
      for (const [key, blocks] of [
        ['1b', 1n],
        ['5b', 5n],
        ['25b', 25n],
      ] as const) {
        const mid = human(await curveMid(BigInt(s.blockNumber) + blocks));
        expect(s.markoutsBps[key]).toBeCloseTo((side * (mid - price) * 10_000) / price, 2);
      }
      // 12 s: the book in force then, the last block at or before the swap's time + 12 s.
      const t = Date.parse(s.blockTime) / 1000 + 12;
      let n = BigInt(s.blockNumber);
      while (Number((await pub.getBlock({ blockNumber: n + 1n })).timestamp) <= t) n += 1n;
      const mid12 = human(await curveMid(n));
      expect(s.markoutsBps['12s']).toBeCloseTo((side * (mid12 - price) * 10_000) / price, 2);
      // Not reached yet: 300 s after the swap.
      expect(s.markoutsBps['300s']).toBeNull();
    }
    const informed = report.swaps.filter((s) => s.integratorId === 'informed');
    const random = report.swaps.filter((s) => s.integratorId === 'random');
    // The informed flow: the market rose 1 % after each of its buys, the maker lost about 1 %.
    for (const s of informed) expect(s.markoutsBps['5b']!).toBeLessThan(-50);
    // The random flow: the maker earns its half spread (5 bps on the first tier), nothing moved against it.
    for (const s of random) expect(Math.abs(s.markoutsBps['1b'] as number)).toBeLessThan(10);
    const byIntegrator = report.aggregates.filter((a) => a.by === 'integrator');
    expect(byIntegrator.map((a) => [a.key, a.count])).toEqual([
      ['informed', 2],
      ['random', 2],
    ]);
    expect(byIntegrator[0]!.markoutsBps['5b']!.mean).toBeLessThan(-50);
    expect(byIntegrator[0]!.markoutsBps['5b']!.ci95).not.toBeNull();

    // The table and the CSV of the same report, and --integrator.
    const table = await markouts(['--from', day(-1), '--to', day(1), '--chain', '8453']);
    expect(table.out).toMatch(/integrator\s+informed\s+2\s/);
    const csv = await markouts(['--from', day(-1), '--to', day(1), '--integrator', 'random', '--format', 'csv']);
    expect(csv.out.trim().split('\n')).toHaveLength(1 + random.length);
  });

  it("behavior: an aggregator's split route (two legs in one transaction through its executor) is attributed leg by leg", async () => {
    const deploy = await user.deployContract({
      abi: TestExecutorArtifact.abi,
      bytecode: TestExecutorArtifact.bytecode as Hex,
      args: [stack.contracts.router as Hex],
    });
    const executor = (await pub.waitForTransactionReceipt({ hash: deploy })).contractAddress!.toLowerCase() as Hex;
    const store = new ApiKeyStore(redis, DEFAULT_KEY_PREFIX);
    await store.putIntegrator({
      id: 'aggregator',
      name: 'aggregator',
      whitelist: [executor],
      chains: [],
      rateLimit: { requests: 100_000, windowSeconds: 60 },
      disabled: false,
    });
    apiKeys.set('aggregator', (await store.issueKey('aggregator')).apiKey);
    for (const token of [quote, weth]) await confirm(approve(token, executor));
    const amount = 500n * 10n ** BigInt(stack.quoteToken.decimals);
    const legs = [];
    for (const a of [amount, amount * 2n]) {
      const s = await sign('aggregator', {
        tokenIn: quote,
        tokenOut: weth,
        amountIn: a.toString(),
        userAddress: executor,
      });
      legs.push({
        tokenIn: quote,
        amountIn: a,
        tokenOut: weth,
        minOutAmount: 0n,
        quoteTimestamp: BigInt(s.timestamp),
        verificationData: s.verificationData,
      });
    }
    const receipt = await confirm(
      user.writeContract({
        address: executor,
        abi: TestExecutorArtifact.abi,
        functionName: 'swapBatch',
        args: [legs, false],
      }),
    );
    await waitForLedger(receipt.blockNumber);
    const held = (await ledgerEntries()).filter((e) => e.txHash === receipt.hash.toLowerCase());
    expect(held.map((e) => [e.callIndex, e.via, e.integratorId, e.quoteAmount])).toEqual([
      [0, 'nested', 'aggregator', '500'],
      [1, 'nested', 'aggregator', '1000'],
    ]);
  });

  it('behavior: a reorg removes what the orphaned blocks held', async () => {
    const snapshot = (await pub.request({ method: 'evm_snapshot' as never })) as Hex;
    const block = await swap('random', quote, 10n ** BigInt(stack.quoteToken.decimals));
    const orphan = made.pop()!;
    await waitForLedger(block);
    expect((await ledgerEntries()).some((e) => e.txHash === orphan.txHash.toLowerCase())).toBe(true);
    await pub.request({ method: 'evm_revert' as never, params: [snapshot] as never });
    // The chain goes on from before the swap; the ledger follows it past the orphaned height.
    await until(async () => (await pub.getBlockNumber()) > block + 2n, 30_000);
    await until(async () => !(await ledgerEntries()).some((e) => e.txHash === orphan.txHash.toLowerCase()), 30_000);
    await waitForLedger(block + 2n);
    const metrics = await (await fetch(ledgerProcess.metricsUrl!)).text();
    expect(metrics).toMatch(/ledger_orphaned_swaps_total\{[^}]*\} [1-9]/);
  });

  it('behavior: killed mid-stream and started again, the ledger resumes without a gap or a duplicate', async () => {
    const port = await freePort();
    const before = made.length;
    const swaps = (async () => {
      // Distinct amounts per integrator, as in the first case.
      for (let i = 0; i < 6; i++)
        await swap(i % 2 ? 'informed' : 'random', quote, 10n ** BigInt(stack.quoteToken.decimals) + BigInt(i % 2));
    })();
    await until(async () => made.length >= before + 2, 60_000);
    await ledgerProcess.stop('SIGKILL');
    await until(async () => made.length >= before + 4, 60_000);
    ledgerProcess = spawnService('ledger', {
      name: 'ledger again',
      env: {
        ...ledgerEnv(
          { redisUrl: sys.redisUrl, configFile: sys.configFile, chainIds: [CHAIN] },
          { chainId: CHAIN, port },
        ),
        // Its own Redis user on each server, as startSystem's ledger.
        ...sys.redisEnvOf(`ledger-${CHAIN}`),
      },
      metricsUrl: `http://127.0.0.1:${port}/metrics`,
    });
    await swaps;
    await waitForLedger(await pub.getBlockNumber());
    const held = await ledgerEntries();
    const ids = held.map((e) => `${e.txHash}:${e.callIndex}`);
    expect(new Set(ids).size).toBe(ids.length);
    // Every swap the test made (and did not orphan) is held, once, attributed to who asked.
    expect(held.map((e) => [e.txHash, e.callIndex, e.integratorId]).sort()).toEqual(
      made
        .map((m) => [m.txHash.toLowerCase(), m.callIndex, m.integratorId])
        .concat(aggregatorLegs(held))
        .sort(),
    );
    await ledgerProcess.stop();
  });
});

/** The aggregator's legs (its transaction is not in `made`). */
const aggregatorLegs = (held: LedgerEntry[]) =>
  held.filter((e) => e.integratorId === 'aggregator').map((e) => [e.txHash, e.callIndex, e.integratorId]);
