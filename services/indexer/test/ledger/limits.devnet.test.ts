/**
 * The limits that trip on what executes, end to end on the devnet (processes as `npm start` runs
 * them: indexer, signer, gateway and the ledger with every limit set, testkit's startSystem, one
 * anvil chain mining a block a second, a still market moved only by this test). Real swaps,
 * signed through the gateway and executed by the test user, trip each limit:
 *
 * - integrator notional: `whale` executes 3,201 USDC against a 3,000 cap;
 * - integrator markout: after each of `informed`'s swaps the test raises the curve's mid by 1 %
 *   (the market moves against the maker), three swaps against a floor of −20 bps at 25 blocks
 *   (mined at once after the last move);
 * - executed below quote: `slipped` signs with a firm quote (amountIn, slippageBps), the test
 *   raises the mid before the swap executes, so it executes below its quote, twice;
 * - pair notional: two integrators, each under its own cap, together execute 5,300 USDC of WBTC
 *   against the pair's 5,000;
 * - revert share, with hysteresis: `reverter`'s calls revert (a minimum above what the curve
 *   pays), 2 of 3 against a trip level of 5,000 bps; resumed, 1 of 4 (2,500 bps, under the trip
 *   level) halts it again, as it is held to the re-arm level of 2,000 for a window after the resume;
 * - unused share: `taker` asks for three firm quotes and sends none; once their windows have
 *   passed in the ledger's time (the chain's: moved on past their deadline after the tests
 *   between, after the last resume), 3 of 3 unused against 5,000 bps over at least 3 halts it.
 *   (Every other sign of this test that is never sent asks for no firm quote.)
 *
 * Each trip halts exactly its scope (a sign in it answers 503 HALTED, a sign elsewhere 200), is
 * recorded with its limit, value and threshold (`risk status`, `risk history`, the metric), and a
 * resume restarts the window: the swaps before it trip nothing again, not even in a ledger
 * started again after the resume. A ledger started again mid-window still counts the swaps
 * before its restart.
 */
import { TestTokenArtifact } from '@pmm/contracts';
import {
  DEFAULT_KEY_PREFIX,
  DurableWrites,
  HaltStore,
  bookBlockKey,
  createRedis,
  haltScopeName,
  ledgerEnv,
  redisKeys,
  redisReady,
  type HaltRecord,
  type HaltScope,
  type RedisClient,
} from '@pmm/core';
import { deployerWallet, type ChainStack } from '@pmm/devnet';
import { ApiKeyStore } from '@pmm/gateway';
import { runRiskCommand } from '@pmm/operator';
import { decodeSwapCalldata, encodeSwapCalldata } from '@pmm/protocol';
import {
  chainClients,
  freePort,
  moveCurveMid,
  spawnService,
  startSystem,
  until,
  type ServiceProcess,
  type System,
} from '@pmm/testkit';
import request from 'supertest';
import { createTestClient, http } from 'viem';
import type { Abi, Account, Chain, Hex, PublicClient, Transport, WalletClient } from 'viem';
import { CLOCK_AHEAD_MS } from '../support/ledger-devnet';

jest.setTimeout(600_000);

const CHAIN = 8453;
const keys = redisKeys(DEFAULT_KEY_PREFIX);
const erc20Abi = TestTokenArtifact.abi as Abi;
const LIMITS = {
  LIMIT_INTEGRATOR_NOTIONAL: '3000',
  LIMIT_PAIR_NOTIONAL: '5000',
  LIMIT_MARKOUT_FLOOR_BPS: '-20',
  // 25 blocks: the test's move of the curve lands well inside it, however loaded the machine.
  LIMIT_MARKOUT_HORIZON: '25b',
  LIMIT_MARKOUT_MIN_SWAPS: '3',
  LIMIT_BELOW_QUOTE_SHARE_BPS: '5000',
  LIMIT_BELOW_QUOTE_MIN_SWAPS: '2',
  LIMIT_REVERT_SHARE_BPS: '5000',
  LIMIT_REVERT_REARM_BPS: '2000',
  LIMIT_REVERT_MIN_CALLS: '3',
  LIMIT_UNUSED_SHARE_BPS: '5000',
  LIMIT_UNUSED_MIN_FIRM: '3',
};
/**
 * The indexer and the ledger follow blocks stamped up to CLOCK_AHEAD_MS ahead of the wall clock
 * (MAX_HEAD_LEAD_MS): the last test moves the chain's clock on past the taker's deadlines.
 */
const CLOCK_AHEAD = { MAX_HEAD_LEAD_MS: String(CLOCK_AHEAD_MS) };
const INTEGRATORS = ['whale', 'informed', 'slipped', 'pair-a', 'pair-b', 'reverter', 'taker', 'bystander'];

let sys: System;
/** The records' server (halts, integrators and keys, the ledger), as its administrator. */
let redis: RedisClient;
/** The rebuildable server (the book), as its administrator. */
let rebuildable: RedisClient;
/** `npm run risk`'s connections, as its Redis user: the records' server and the rebuildable one (the pair registries). */
let riskRecords: RedisClient;
let riskRegistries: RedisClient;
let halts: HaltStore;
let stack: ChainStack;
let pub: PublicClient;
let user: WalletClient<Transport, Chain, Account>;
let owner: WalletClient<Transport, Chain, Account>;
let weth: Hex;
let wbtc: Hex;
let quote: Hex;
let usdc: (whole: number) => bigint;
let ledger: ServiceProcess;
const apiKeys = new Map<string, string>();
/** The last deadline (Unix s) of the taker's firm signatures, which it never sends. */
let takerDeadline = 0;

beforeAll(async () => {
  sys = await startSystem({
    chains: [CHAIN],
    blockIntervalMs: 1_000,
    services: ['indexer', 'signer', 'gateway', 'ledger'],
    // The market is moved by moving curves alone: the references only watch (docs/operations/references.md).
    env: { ledger: { ...LIMITS, ...CLOCK_AHEAD }, indexer: { REFERENCE_MODE: 'watch', ...CLOCK_AHEAD } },
  });
  stack = sys.chain(CHAIN);
  ledger = sys.processesOf('ledger')[0]!;
  const clients = chainClients(stack);
  pub = clients.publicClient;
  user = clients.wallet(stack.testUser.privateKey);
  owner = clients.wallet(deployerWallet().privateKey);
  weth = stack.tokens.WETH!.address as Hex;
  wbtc = stack.tokens.WBTC!.address as Hex;
  quote = stack.quoteToken.address as Hex;
  usdc = (whole) => BigInt(whole) * 10n ** BigInt(stack.quoteToken.decimals);
  redis = createRedis(sys.redisRecordsUrl, { name: 'limits-e2e' });
  rebuildable = createRedis(sys.redisUrl, { name: 'limits-e2e-rebuildable' });
  const riskEnv = sys.redisEnvOf('risk');
  riskRecords = createRedis(riskEnv.REDIS_RECORDS_URL, { name: 'limits-e2e-risk' });
  riskRegistries = createRedis(riskEnv.REDIS_URL, { name: 'limits-e2e-risk-pairs' });
  await Promise.all([redis, rebuildable, riskRecords, riskRegistries].map((client) => redisReady(client)));
  halts = new HaltStore(redis, keys);
  const store = new ApiKeyStore(redis, DEFAULT_KEY_PREFIX);
  for (const id of INTEGRATORS) {
    await store.putIntegrator({
      id,
      name: id,
      whitelist: [stack.testUser.address.toLowerCase()],
      chains: [],
      rateLimit: { requests: 100_000, windowSeconds: 60 },
      disabled: false,
    });
    apiKeys.set(id, (await store.issueKey(id)).apiKey);
  }
  await confirm(
    user.writeContract({
      address: quote,
      abi: erc20Abi,
      functionName: 'approve',
      args: [stack.contracts.router, 2n ** 255n],
    }),
  );
  // The ledger starts at the head it first sees: every swap below comes after it.
  const head = await pub.getBlockNumber();
  await until(async () => (await ledgerCursor()) >= Number(head), 60_000, 'the ledger following the chain', 200);
});

afterAll(async () => {
  for (const client of [redis, rebuildable, riskRecords, riskRegistries]) client?.disconnect();
  await ledger?.stop();
  await sys?.stop();
});

async function confirm(sent: Promise<Hex> | Hex): Promise<bigint> {
  const receipt = await pub.waitForTransactionReceipt({ hash: await sent });
  expect(receipt.status).toBe('success');
  return receipt.blockNumber;
}

const ledgerCursor = async (): Promise<number> =>
  Number(JSON.parse((await redis.get(keys.ledgerCursor(CHAIN))) ?? '{"number":-1}').number);

/** A sign through the gateway: quote in, for `amountIn` (a firm quote). */
function sign(integratorId: string, tokenOut: Hex, amountIn: bigint, extra: Record<string, unknown> = {}) {
  return request(sys.gateway.url)
    .post('/v2/swap/sign')
    .set('X-API-KEY', apiKeys.get(integratorId)!)
    .set('Content-Type', 'application/json')
    .send(
      JSON.stringify({
        chainId: CHAIN,
        fee: '10',
        userAddress: stack.testUser.address,
        tokenIn: quote,
        tokenOut,
        amountIn: amountIn.toString(),
        ...extra,
      }),
    );
}

/**
 * A signature without a firm quote (no `amountIn`): what this test asks of integrators it only
 * checks can sign, so that the unused limit (firm signatures never used) counts only `taker`'s.
 */
function quoteOnly(integratorId: string, tokenOut: Hex) {
  return request(sys.gateway.url)
    .post('/v2/swap/sign')
    .set('X-API-KEY', apiKeys.get(integratorId)!)
    .set('Content-Type', 'application/json')
    .send(JSON.stringify({ chainId: CHAIN, fee: '10', userAddress: stack.testUser.address, tokenIn: quote, tokenOut }));
}

/**
 * One swap: signed for `integratorId` (each integrator its own amounts: two identical requests in
 * one second get one signature, which no one can attribute), `beforeExecute` run, then executed.
 */
async function swap(
  integratorId: string,
  tokenOut: Hex,
  amountIn: bigint,
  opts: { slippageBps?: number; beforeExecute?: () => Promise<void> } = {},
): Promise<{ block: bigint; quoted: bigint }> {
  const signed = await sign(
    integratorId,
    tokenOut,
    amountIn,
    opts.slippageBps === undefined ? {} : { slippageBps: opts.slippageBps },
  );
  expect([signed.status, signed.body]).toEqual([200, expect.objectContaining({ amountOut: expect.any(String) })]);
  await opts.beforeExecute?.();
  const block = await confirm(
    user.sendTransaction({ to: stack.contracts.router as Hex, data: (signed.body as { calldata: Hex }).calldata }),
  );
  return { block, quoted: BigInt((signed.body as { amountOut: string }).amountOut) };
}

/** A call that reverts: signed for `integratorId`, sent with a minimum above what the curve pays (InsufficientOutput). */
async function revertingSwap(integratorId: string, amountIn: bigint): Promise<bigint> {
  const signed = await sign(integratorId, weth, amountIn);
  expect(signed.status).toBe(200);
  const greedy = encodeSwapCalldata({
    ...decodeSwapCalldata((signed.body as { calldata: string }).calldata),
    minAmountOut: 2n ** 200n,
  }) as Hex;
  const hash = await user.sendTransaction({ to: stack.contracts.router as Hex, data: greedy, gas: 600_000n });
  const receipt = await pub.waitForTransactionReceipt({ hash });
  expect(receipt.status).toBe('reverted');
  return receipt.blockNumber;
}

/** Moves `base`'s curve mid by `factorPpm` (1_010_000: +1 %) and waits until the served book has it. */
async function moveCurve(base: Hex, factorPpm: bigint): Promise<void> {
  const block = await moveCurveMid({ pub, owner, router: stack.contracts.router }, base, factorPpm);
  // The next firm quote is made at the book's block: one from before the move would make the
  // next swap execute below its quote, which is another limit's business.
  await until(
    async () => Number((await rebuildable.get(bookBlockKey(keys.book(CHAIN)))) ?? 0) >= Number(block),
    30_000,
    'the book past the move',
    100,
  );
}

/** The halt of exactly `scope`, once a limit has tripped it. */
const tripped = (scope: HaltScope, what: string): Promise<HaltRecord> =>
  until(
    async () => (await halts.active()).find((h) => haltScopeName(h.scope) === haltScopeName(scope) && h.trip),
    120_000,
    what,
    250,
  );

/** Waits until signs in the halted scope answer 503 HALTED (every replica within a second) and checks one elsewhere still signs. */
async function expectHaltedOnly(halted: () => ReturnType<typeof sign>, elsewhere: () => ReturnType<typeof sign>) {
  const refused = await until(
    async () => {
      const res = await halted();
      return res.status === 503 ? res : undefined;
    },
    20_000,
    'a sign in the halted scope refused',
    100,
  );
  expect(refused.body).toMatchObject({ error: { code: 'HALTED' } });
  expect(refused.headers['retry-after']).toBe('60');
  const res = await elsewhere();
  expect([res.status, res.body.error]).toEqual([200, undefined]);
}

async function metricValue(process: ServiceProcess, limit: string): Promise<number> {
  const text = await (await fetch(process.metricsUrl!)).text();
  const line = text
    .split('\n')
    .find((l) => l.startsWith('ledger_limit_trips_total{') && l.includes(`limit="${limit}"`));
  return Number(line?.split(' ').at(-1));
}

/** Waits until the limits have been evaluated at `block` or later (the ledger's own gauge). */
async function limitsEvaluated(process: ServiceProcess, block: bigint): Promise<void> {
  await until(
    async () => {
      // A ledger just started is not listening yet.
      const text = await fetch(process.metricsUrl!).then(
        (res) => res.text(),
        () => '',
      );
      const line = text.split('\n').find((l) => l.startsWith('ledger_limits_block{'));
      return Number(line?.split(' ').at(-1) ?? 0) >= Number(block);
    },
    60_000,
    `the limits evaluated at block ${block}`,
    200,
  );
}

/** Stops the chain's ledger and starts it again with the same settings (its state: Redis only). */
async function restartLedger(): Promise<void> {
  await ledger.stop();
  const port = await freePort();
  ledger = spawnService('ledger', {
    name: 'ledger again',
    env: {
      ...ledgerEnv({ redisUrl: sys.redisUrl, configFile: sys.configFile, chainIds: [CHAIN] }, { chainId: CHAIN, port }),
      // Its own Redis user on each server, as startSystem's ledger.
      ...sys.redisEnvOf(`ledger-${CHAIN}`),
      REDIS_DURABILITY: 'none',
      LOG_LEVEL: 'warn',
      ...LIMITS,
      ...CLOCK_AHEAD,
    },
    metricsUrl: `http://127.0.0.1:${port}/metrics`,
  });
}

/**
 * Mines `blocks` blocks at once (anvil_mine): a block horizon passed without waiting a second a
 * block. anvil stamps them all with the clock's second: the chain's clock stays the wall clock's,
 * by which the resumes are dated.
 */
async function mineBlocks(blocks: number): Promise<void> {
  await createTestClient({ mode: 'anvil', transport: http(stack.rpcUrl) }).mine({ blocks });
}

async function risk(argv: string[]): Promise<{ code: number; out: string }> {
  let out = '';
  const code = await runRiskCommand(
    argv,
    {
      redis: riskRecords,
      registries: async () => riskRegistries,
      keys,
      durability: DurableWrites.unconfirmed(riskRecords),
      exposureSettleMs: 0,
      sleep: async () => undefined,
      login: () => 'operator',
    },
    { out: (line) => (out += `${line}\n`), err: (line) => (out += `${line}\n`) },
  );
  return { code, out };
}

describe('limits that trip on what executes', () => {
  it("behavior: an integrator's executed notional above its cap halts that integrator only; after a resume the old swaps trip nothing, in a ledger restarted too", async () => {
    const first = await swap('whale', weth, usdc(1600));
    await limitsEvaluated(ledger, first.block);
    expect(await halts.active()).toEqual([]);
    // A ledger started again reloads its window from the ledger in Redis: the first 1,600 still count.
    await restartLedger();
    await swap('whale', weth, usdc(1601));
    const halt = await tripped({ integratorId: 'whale' }, 'the whale halted');
    expect(halt).toMatchObject({
      scope: { integratorId: 'whale' },
      by: `ledger-${CHAIN}`,
      trip: { limit: 'integrator-notional', value: '3201', threshold: '3000' },
    });
    expect(halt.reason).toMatch(
      /^limit integrator-notional: whale executed 3201 USDC on chain 8453 in the last 3600 s \(2 swaps\)/,
    );
    await expectHaltedOnly(
      () => sign('whale', weth, usdc(7)),
      () => quoteOnly('bystander', weth),
    );
    // What the operator sees: the limit, its value and its threshold.
    const status = await risk(['status']);
    expect(status.out).toContain('integrator=whale  halted since');
    expect(status.out).toContain('[limit integrator-notional tripped: value 3201, threshold 3000]');
    await until(async () => (await metricValue(ledger, 'integrator-notional')) === 1, 10_000, 'the trip counted', 100);

    expect((await risk(['resume', '--integrator', 'whale', '--reason', 'flow reviewed'])).code).toBe(0);
    // Every signer sees the resume at its next read of the halts (five times a second).
    await until(async () => (await quoteOnly('whale', weth)).status === 200, 20_000, 'the whale signed again', 100);
    // The window restarted at the resume: 100 more is far under the cap, the 3,201 before never count again.
    const after = await swap('whale', weth, usdc(100));
    await limitsEvaluated(ledger, after.block);
    expect(await halts.active()).toEqual([]);

    // Started again, it reads the resume from the halts' log: its reloaded window holds 3,301 of
    // the whale's, of which only the 100 after the resume count.
    await restartLedger();
    const again = await swap('whale', weth, usdc(50));
    await limitsEvaluated(ledger, again.block);
    expect(await halts.active()).toEqual([]);
    expect((await quoteOnly('whale', weth)).status).toBe(200);
  });

  it('behavior: an integrator whose swaps the market moves against (its markout below the floor over 3 swaps) is halted, only it', async () => {
    // The unused limit's taker asks for its firm quotes now: their windows run during the next
    // tests, and the last one moves the chain's clock past what is left of them.
    for (const amount of [113, 114, 115]) {
      const signed = await sign('taker', weth, usdc(amount));
      expect(signed.status).toBe(200);
      takerDeadline = Math.max(takerDeadline, (signed.body as { deadline: number }).deadline);
    }
    for (const amount of [101, 102, 103]) {
      await swap('informed', weth, usdc(amount));
      // The market rises 1 % right after each purchase: the maker sold too cheap.
      await moveCurve(weth, 1_010_000n);
    }
    // The last swap's 25b horizon: its blocks mined at once, after the last move.
    await mineBlocks(25);
    const halt = await tripped({ integratorId: 'informed' }, 'the informed integrator halted');
    expect(halt.trip).toMatchObject({ limit: 'integrator-markout', threshold: '-20' });
    // About −100 bps per move inside the horizon, less the maker's half spread.
    expect(Number(halt.trip!.value)).toBeLessThan(-50);
    expect(halt.reason).toMatch(/^limit integrator-markout: informed's mean 25b markout on chain 8453 .* over 3 swaps/);
    await expectHaltedOnly(
      () => sign('informed', weth, usdc(11)),
      () => quoteOnly('bystander', weth),
    );
    await until(async () => (await metricValue(ledger, 'integrator-markout')) === 1, 10_000, 'the trip counted', 100);
  });

  it('behavior: an integrator whose swaps execute below their firm quote (the market moved before they did) is halted, only it', async () => {
    for (const amount of [104, 105]) {
      const { quoted } = await swap('slipped', weth, usdc(amount), {
        slippageBps: 200,
        // Between the quote and the swap the curve's mid rises 0.5 %: fewer WETH than quoted, within the slippage.
        beforeExecute: () => moveCurve(weth, 1_005_000n),
      });
      expect(quoted).toBeGreaterThan(0n);
    }
    const halt = await tripped({ integratorId: 'slipped' }, 'the slipped integrator halted');
    expect(halt.trip).toEqual({ limit: 'integrator-below-quote', value: '10000', threshold: '5000' });
    expect(halt.reason).toMatch(
      /^limit integrator-below-quote: 2 of slipped's 2 swaps with a firm quote on chain 8453/,
    );
    await expectHaltedOnly(
      () => sign('slipped', weth, usdc(13)),
      () => quoteOnly('bystander', weth),
    );
  });

  it("behavior: a pair's executed notional above its cap halts the pair on its chain: its signs refused for everyone, other pairs signed", async () => {
    await swap('pair-a', wbtc, usdc(2600));
    await swap('pair-b', wbtc, usdc(2700));
    const scope = { chainId: CHAIN, pair: wbtc.toLowerCase() };
    const halt = await tripped(scope, 'the WBTC pair halted');
    expect(halt.trip).toEqual({ limit: 'pair-notional', value: '5300', threshold: '5000' });
    expect(halt.reason).toMatch(/^limit pair-notional: WBTC\/USDC executed 5300 USDC on chain 8453/);
    await expectHaltedOnly(
      () => quoteOnly('bystander', wbtc),
      () => quoteOnly('bystander', weth),
    );
    // Neither integrator is halted: each stayed under its own cap. (The taker may have tripped the
    // unused limit by now, a test of its own.)
    const notTaker = (name: string) => name !== 'integrator=taker';
    expect(
      (await halts.active())
        .map((h) => haltScopeName(h.scope))
        .filter(notTaker)
        .sort(),
    ).toEqual([haltScopeName(scope), 'integrator=informed', 'integrator=slipped'].sort());

    // Every trip in the history, with its limit, value and threshold.
    const history = JSON.parse((await risk(['history', '--format', 'json'])).out) as {
      action: string;
      name: string;
      trip?: { limit: string; value: string; threshold: string };
    }[];
    // The halts' entries (the history also lists the pairs' transitions in and out of band: the
    // curves moved here by hand leave their references behind, in watch mode).
    const haltEntries = history.filter((e) => (e.action === 'halt' || e.action === 'resume') && notTaker(e.name));
    expect(haltEntries.map((e) => [e.action, e.name, e.trip?.limit])).toEqual([
      ['halt', 'integrator=whale', 'integrator-notional'],
      ['resume', 'integrator=whale', undefined],
      ['halt', 'integrator=informed', 'integrator-markout'],
      ['halt', 'integrator=slipped', 'integrator-below-quote'],
      ['halt', `chain=${CHAIN} pair=${wbtc.toLowerCase()}`, 'pair-notional'],
    ]);
    await until(async () => (await metricValue(ledger, 'pair-notional')) === 1, 10_000, 'the trip counted', 100);
  });

  it('behavior: an integrator whose calls revert above the trip level is halted; resumed, it is held to the re-arm level for a window and halted again under the trip level', async () => {
    await swap('reverter', weth, usdc(106));
    await revertingSwap('reverter', usdc(107));
    const block = await revertingSwap('reverter', usdc(108));
    const halt = await tripped({ integratorId: 'reverter' }, 'the reverter halted');
    expect(halt.trip).toEqual({ limit: 'integrator-reverts', value: '6666.67', threshold: '5000' });
    expect(halt.reason).toMatch(
      /^limit integrator-reverts: 2 of reverter's 3 router calls on chain 8453 in the last 3600 s reverted \(6666\.67 bps\), above the trip level of 5000 bps/,
    );
    await expectHaltedOnly(
      () => sign('reverter', weth, usdc(17)),
      () => quoteOnly('bystander', weth),
    );
    expect((await risk(['resume', '--integrator', 'reverter', '--reason', 'integration fixed'])).code).toBe(0);
    await until(async () => (await quoteOnly('reverter', weth)).status === 200, 20_000, 'the reverter signed', 100);
    // Block times are whole seconds: a swap mined in the resume's own second reads as mined before
    // it (the window restarts strictly after the resume), so the probation's swaps wait for the
    // next second (one of them so mined made 1 of 3 calls, 3333.33 bps, in a loaded full run).
    await new Promise((r) => setTimeout(r, 1_000));
    // On probation: three swaps execute, then one call reverts: 2,500 bps, under the trip level.
    for (const amount of [109, 110, 111]) {
      const { block: executed } = await swap('reverter', weth, usdc(amount));
      await limitsEvaluated(ledger, executed);
      expect((await halts.active()).some((h) => h.scope.integratorId === 'reverter')).toBe(false);
    }
    expect(await revertingSwap('reverter', usdc(112))).toBeGreaterThan(block);
    const again = await tripped({ integratorId: 'reverter' }, 'the reverter halted again, on probation');
    expect(again.trip).toEqual({ limit: 'integrator-reverts', value: '2500', threshold: '2000' });
    expect(again.reason).toMatch(
      /since its resume at .* \(2500 bps\), above the re-arm level of 2000 bps \(on probation/,
    );
    await until(async () => (await metricValue(ledger, 'integrator-reverts')) === 2, 10_000, 'both trips counted', 100);
  });

  it('behavior: an integrator whose firm signatures go unused above the trip level (over the minimum) is halted, only it', async () => {
    // The taker's windows pass in the ledger's time, the chain's: the next block is stamped past
    // their deadline rather than waiting for it. Only after the last resume: from here on block
    // times run ahead of the wall clock, and a call before a later resume would read as after it.
    if ((await pub.getBlock()).timestamp <= BigInt(takerDeadline))
      await createTestClient({ mode: 'anvil', transport: http(stack.rpcUrl) }).setNextBlockTimestamp({
        timestamp: BigInt(takerDeadline + 1),
      });
    const halt = await tripped({ integratorId: 'taker' }, 'the taker halted');
    expect(halt.trip).toEqual({ limit: 'integrator-unused', value: '10000', threshold: '5000' });
    expect(halt.reason).toMatch(
      /^limit integrator-unused: 3 of taker's 3 firm signatures on chain 8453 whose window passed in the last 3600 s were never used \(10000 bps\), above the trip level of 5000 bps/,
    );
    await expectHaltedOnly(
      () => quoteOnly('taker', weth),
      () => quoteOnly('bystander', weth),
    );
    await until(async () => (await metricValue(ledger, 'integrator-unused')) === 1, 10_000, 'the trip counted', 100);
  });
});
