/**
 * The ledger's reverted router calls, end to end on the devnet, on every chain (processes as
 * `npm start` runs them: three anvil chains mining a block a second, their indexers, the signer, the
 * gateway and a ledger per chain; the routers, and the signer, with a validity of 15 s, not the
 * shipped 60 s, since the test waits for windows to pass). Two integrators sign through the
 * gateway; the test user then sends what aggregators' users send: a swap that executes, and one
 * that reverts for each reason the router has (mined after its window; a minimum above what the
 * curve pays; a router drained of the token it pays; sent by another address; a signed field
 * changed after signing), one that reverts inside an executor contract, and one executor's optional
 * leg that reverts in a transaction that goes on, and signatures never used. Each reverted call
 * must be in the chain's ledger with the router's error and who asked for its signature; nothing
 * else is. Once the windows have passed, `npm run fills` (as the operator's Redis user) gives each
 * signature its fate and reason, and its figures per integrator add up; each integrator reads the
 * same fates of its own signatures, and none of the other's, with its own key (`GET /v2/fills`,
 * through the gateway as its Redis user). A reorg that removes a reverted transaction removes its
 * record and its fate.
 */
import { TestExecutorArtifact, TestTokenArtifact } from '@pmm/contracts';
import {
  DEFAULT_KEY_PREFIX,
  createRedis,
  parseAuditRecord,
  parseLedgerCursor,
  parseLedgerRevert,
  redisKeys,
  redisReady,
  type LedgerRevert,
  type RedisClient,
} from '@pmm/core';
import { deployerWallet, type ChainStack } from '@pmm/devnet';
import { ApiKeyStore } from '@pmm/gateway';
import type { FillReport } from '@pmm/operator';
import {
  decodeSwapCalldata,
  decodeVerificationData,
  encodeSwapCalldata,
  type FillFate,
  type FillsResponse,
} from '@pmm/protocol';
import { chainClients, startSystem, until, type System } from '@pmm/testkit';
import request from 'supertest';
import { encodeAbiParameters, getContractAddress, keccak256, type Abi, type Hex } from 'viem';
import { dayFromNow as day, fillsCommand, ledgerCursorOf, type OperatorCommand } from '../support/ledger-devnet';

jest.setTimeout(420_000);

const CHAINS = [8453, 56, 4663];
const keys = redisKeys(DEFAULT_KEY_PREFIX);
const erc20Abi = TestTokenArtifact.abi as Abi;
/** TestToken's `balanceOf` mapping is its storage slot 3 (name, symbol, totalSupply before it). */
const BALANCE_SLOT = 3n;
/**
 * The routers' validity (and the signer's with it): the late call waits for its window to pass,
 * and the fates for the last signature's. Still many times what a signature here takes to be sent
 * and mined (a second or two, at a load average of 27 on two cores), so that every call meant to
 * land inside its window does.
 */
const VALIDITY_SECONDS = 15;

let sys: System;
let redis: RedisClient;
/** `npm run fills`, as the operator's Redis user. */
let fillsCli: OperatorCommand;
const apiKeys = new Map<string, string>();

beforeAll(async () => {
  sys = await startSystem({
    chains: CHAINS,
    blockIntervalMs: 1_000,
    services: ['indexer', 'signer', 'gateway', 'ledger'],
    quoteValiditySeconds: VALIDITY_SECONDS,
  });
  redis = createRedis(sys.redisRecordsUrl, { name: 'ledger-reverts-e2e' });
  await redisReady(redis);
  fillsCli = await fillsCommand(sys, keys);
});

afterAll(async () => {
  redis?.disconnect();
  await fillsCli?.close();
  await sys?.stop();
});

/** What one chain's part of the test sent, and the ledger record each reverted call must have. */
interface Expected {
  txHash: string;
  callIndex: number;
  reason: string;
  integratorId: string;
  via: 'direct' | 'nested';
  txReverted: boolean;
  altered?: true;
}

interface Signed {
  /** The X-Request-Id the test sent with it: the audit record's clientRequestId. */
  requestId: string;
  calldata: Hex;
  verificationData: Hex;
  timestamp: number | string;
}

/**
 * A sign request's fate as `fills` must report it. By request, not by signature: requests of the
 * same user and pair in the same second get the same signature (it covers no amount).
 */
interface ExpectedFate {
  clientRequestId: string;
  integratorId: string;
  fate: 'executed' | 'reverted' | 'unused';
  reason?: string;
}

/** One chain: its clients, an executor, and the swaps that execute or revert. */
async function chainCase(chainId: number) {
  const stack: ChainStack = sys.chain(chainId);
  const clients = chainClients(stack);
  const pub = clients.publicClient;
  const user = clients.wallet(stack.testUser.privateKey);
  const stranger = clients.wallet(deployerWallet().privateKey);
  const router = stack.contracts.router as Hex;
  const weth = stack.tokens.WETH!.address as Hex;
  const quote = stack.quoteToken.address as Hex;
  const unit = 10n ** BigInt(stack.quoteToken.decimals);
  let nth = 0n;

  const mined = async (hash: Hex, status: 'success' | 'reverted') => {
    const receipt = await pub.waitForTransactionReceipt({ hash });
    expect(receipt.status).toBe(status);
    return receipt;
  };
  const deploy = await user.deployContract({
    abi: TestExecutorArtifact.abi,
    bytecode: TestExecutorArtifact.bytecode as Hex,
    args: [router],
  });
  const executor = (await mined(deploy, 'success')).contractAddress!.toLowerCase() as Hex;
  for (const token of [quote, weth])
    for (const spender of [router, executor])
      await mined(
        await user.writeContract({
          address: token,
          abi: erc20Abi,
          functionName: 'approve',
          args: [spender, 2n ** 255n],
        }),
        'success',
      );

  /** A firm signed quote, quote token in (the maker sells WETH), for `userAddress`; each with its own amount. */
  const sign = async (integratorId: string, userAddress: string = stack.testUser.address): Promise<Signed> => {
    nth += 1n;
    const requestId = `fate-${chainId}-${nth}`;
    const amountIn = 100n * unit + nth;
    const res = await request(sys.gateway.url)
      .post('/v2/swap/sign')
      .set('X-API-KEY', apiKeys.get(integratorId)!)
      .set('X-Request-Id', requestId)
      .set('Content-Type', 'application/json')
      .send(
        JSON.stringify({
          chainId,
          fee: '10',
          userAddress,
          tokenIn: quote,
          tokenOut: weth,
          amountIn: amountIn.toString(),
        }),
      );
    expect(res.status).toBe(200);
    return { ...(res.body as Omit<Signed, 'requestId'>), requestId };
  };
  const withArgs = (calldata: Hex, change: Partial<ReturnType<typeof decodeSwapCalldata>>) =>
    encodeSwapCalldata({ ...decodeSwapCalldata(calldata), ...change }) as Hex;
  const send = (data: Hex, from = user) => from.sendTransaction({ to: router, data, gas: 600_000n });

  const expected: Expected[] = [];
  /** What `fills` must say of each signature once its window has passed. */
  const fates: ExpectedFate[] = [];
  const fate = (signed: Signed, integratorId: string, kind: ExpectedFate['fate'], reason?: string) =>
    fates.push({
      clientRequestId: signed.requestId,
      integratorId,
      fate: kind,
      ...(reason ? { reason } : {}),
    });
  const direct = (txHash: string, reason: string, integratorId: string, more: Partial<Expected> = {}) =>
    expected.push({ txHash, callIndex: 0, reason, integratorId, via: 'direct', txReverted: true, ...more });

  // Signed now, sent once its window has passed.
  const late = await sign('alpha');
  fate(late, 'alpha', 'reverted', 'QuoteExpired');
  // Signed now, sent by another address in the reorg case (WrongSender is checked before the window).
  const orphan = await sign('beta');

  // Executes: no revert record.
  const executing = await sign('alpha');
  fate(executing, 'alpha', 'executed');
  const executed = await mined(await send(executing.calldata), 'success');

  // A minimum above what the curve pays.
  const asked = await sign('alpha');
  fate(asked, 'alpha', 'reverted', 'InsufficientOutput');
  const greedy = withArgs(asked.calldata, { minAmountOut: 2n ** 200n });
  direct((await mined(await send(greedy), 'reverted')).transactionHash, 'InsufficientOutput', 'alpha');

  // Sent by an address other than the one signed for.
  const given = await sign('beta');
  fate(given, 'beta', 'reverted', 'WrongSender');
  const stolen = given.calldata;
  direct((await mined(await send(stolen, stranger), 'reverted')).transactionHash, 'WrongSender', 'beta');

  // The fee changed after signing: the signature no longer matches. The record is still beta's.
  const signed = await sign('beta');
  fate(signed, 'beta', 'reverted', 'InvalidSignature');
  const v = decodeVerificationData(signed.verificationData);
  const tampered = encodeAbiParameters(
    [{ type: 'uint256' }, { type: 'uint256' }, { type: 'address' }, { type: 'bytes' }],
    [v.fee + 1n, v.originRate, v.userAddress as Hex, v.signature as Hex],
  );
  const forged = withArgs(signed.calldata, { verificationData: tampered });
  direct((await mined(await send(forged), 'reverted')).transactionHash, 'InvalidSignature', 'beta', {
    altered: true,
  });

  // A router drained of the token it pays (its WETH balance set to 0, then put back).
  const drained = await sign('alpha');
  fate(drained, 'alpha', 'reverted', 'InsufficientReserve');
  const slot = keccak256(encodeAbiParameters([{ type: 'address' }, { type: 'uint256' }], [router, BALANCE_SLOT]));
  const reserve = await pub.readContract({ address: weth, abi: erc20Abi, functionName: 'balanceOf', args: [router] });
  const setReserve = (value: bigint) =>
    pub.request({
      method: 'anvil_setStorageAt' as never,
      params: [weth, slot, `0x${value.toString(16).padStart(64, '0')}`] as never,
    });
  await setReserve(0n);
  expect(await pub.readContract({ address: weth, abi: erc20Abi, functionName: 'balanceOf', args: [router] })).toBe(0n);
  const dry = await mined(await send(drained.calldata), 'reverted');
  await setReserve(reserve as bigint);
  direct(dry.transactionHash, 'InsufficientReserve', 'alpha');
  // A sign's firm quote is the router's answer at the block of the book served: the next signs wait
  // for a book of a block made after the reserve was put back (an indexer behind on a loaded
  // machine still served the drained block's, and the next sign was refused 422).
  const restored = Number(await pub.getBlockNumber());
  await until(
    async () => {
      const res = await request(sys.gateway.url)
        .get(`/v2/price?chainId=${chainId}`)
        .set('X-API-KEY', apiKeys.get('alpha')!);
      return res.status === 200 && (res.body as { blockNumber: number }).blockNumber > restored;
    },
    30_000,
    'a book with the reserve back',
    200,
  );

  // Inside an executor: its one swap's minimum too high, the whole transaction reverts.
  const leg = (s: Signed, minOutAmount = 0n) => {
    const args = decodeSwapCalldata(s.calldata);
    return {
      tokenIn: args.tokenIn as Hex,
      amountIn: args.amountIn,
      tokenOut: args.tokenOut as Hex,
      minOutAmount,
      quoteTimestamp: args.quoteTimestamp,
      verificationData: args.verificationData as Hex,
    };
  };
  const inside = await sign('beta', executor);
  fate(inside, 'beta', 'reverted', 'InsufficientOutput');
  const nested = await user.writeContract({
    address: executor,
    abi: TestExecutorArtifact.abi,
    functionName: 'swapOne',
    args: [leg(inside, 2n ** 200n)],
    gas: 900_000n,
  });
  expected.push({
    txHash: (await mined(nested, 'reverted')).transactionHash,
    callIndex: 0,
    reason: 'InsufficientOutput',
    integratorId: 'beta',
    via: 'nested',
    txReverted: true,
  });

  // A split route whose second leg reverts and is skipped: the transaction executes its first leg.
  const [first, second] = [await sign('alpha', executor), await sign('alpha', executor)];
  fate(first, 'alpha', 'executed');
  fate(second, 'alpha', 'reverted', 'InsufficientOutput');
  const split = await user.writeContract({
    address: executor,
    abi: TestExecutorArtifact.abi,
    functionName: 'swapBatch',
    args: [[leg(first), leg(second, 2n ** 200n)], true],
    gas: 1_500_000n,
  });
  expected.push({
    txHash: (await mined(split, 'success')).transactionHash,
    callIndex: 1,
    reason: 'InsufficientOutput',
    integratorId: 'alpha',
    via: 'nested',
    txReverted: false,
  });

  // Signed and never sent: no record (its fate is computed from the audit trail, not the chain).
  fate(await sign('beta'), 'beta', 'unused');
  fate(await sign('alpha'), 'alpha', 'unused');

  // Mined after its window.
  const deadline = Number(late.timestamp) + stack.validitySeconds;
  await until(async () => Number((await pub.getBlock()).timestamp) > deadline + 1, 120_000);
  direct((await mined(await send(late.calldata), 'reverted')).transactionHash, 'QuoteExpired', 'alpha');

  const last = await pub.getBlockNumber();
  await until(async () => (await ledgerCursorOf(redis, keys, chainId)) >= Number(last), 60_000);
  return { expected, fates, executed: executed.transactionHash, pub, stranger, orphan };
}

const ledgerOf = (chainId: number) => sys.processesOf('ledger').find((p) => p.name === `ledger ${chainId}`)!;
const cursorOf = async (chainId: number) => {
  const raw = await redis.get(keys.ledgerCursor(chainId));
  return raw === null ? undefined : parseLedgerCursor(raw);
};
/** The audit records of the test's signatures (every chain). */
const signedRecords = async () =>
  (await Promise.all(CHAINS.map((c) => redis.xrange(keys.audit(c), '-', '+'))))
    .flat()
    .map(([, fields]) => parseAuditRecord(fields[1]!));
/**
 * A series' value in the chain's ledger's metrics (0 when absent: a counter not incremented yet),
 * by the labels given.
 */
const metricOf = async (chainId: number, name: string, labels: Record<string, string>): Promise<number> => {
  const text = await (await fetch(ledgerOf(chainId).metricsUrl!)).text();
  const line = text
    .split('\n')
    .find((l) => l.startsWith(`${name}{`) && Object.entries(labels).every(([k, v]) => l.includes(`${k}="${v}"`)));
  return line === undefined ? 0 : Number(line.split(' ').at(-1));
};
const revertsOf = async (chainId: number): Promise<LedgerRevert[]> =>
  (await redis.zrange(keys.ledgerReverts(chainId), 0, -1)).map(parseLedgerRevert);

describe("the ledger's reverted router calls", () => {
  let cases: Map<number, Awaited<ReturnType<typeof chainCase>>>;

  it('behavior: on every chain, each reverted call with the router error and who asked for its signature', async () => {
    // Whitelisted: each chain's test user and executor (the test user's next deployment there).
    const executors = await Promise.all(
      CHAINS.map(async (chainId) => {
        const from = sys.chain(chainId).testUser.address as Hex;
        const nonce = await chainClients(sys.chain(chainId)).publicClient.getTransactionCount({ address: from });
        return getContractAddress({ from, nonce: BigInt(nonce) }).toLowerCase();
      }),
    );
    const store = new ApiKeyStore(redis, DEFAULT_KEY_PREFIX);
    for (const id of ['alpha', 'beta']) {
      await store.putIntegrator({
        id,
        name: id,
        whitelist: [...CHAINS.map((c) => sys.chain(c).testUser.address.toLowerCase()), ...executors],
        chains: [],
        rateLimit: { requests: 100_000, windowSeconds: 60 },
        disabled: false,
      });
      apiKeys.set(id, (await store.issueKey(id)).apiKey);
    }

    cases = new Map(await Promise.all(CHAINS.map(async (c) => [c, await chainCase(c)] as const)));
    for (const chainId of CHAINS) {
      const { expected, executed } = cases.get(chainId)!;
      const held = await revertsOf(chainId);
      const project = (r: LedgerRevert | Expected) => ({
        txHash: r.txHash.toLowerCase(),
        callIndex: r.callIndex,
        reason: r.reason,
        integratorId: r.integratorId,
        via: r.via,
        txReverted: r.txReverted,
        ...(r.altered ? { altered: true } : {}),
      });
      const byTx = (a: { txHash: string }, b: { txHash: string }) => (a.txHash < b.txHash ? -1 : 1);
      expect(held.map(project).sort(byTx)).toEqual(expected.map(project).sort(byTx));
      expect(held.some((r) => r.txHash === executed.toLowerCase())).toBe(false);
      for (const r of held) {
        expect(r.chainId).toBe(chainId);
        expect(r.pair).toBe(`WETH/${sys.chain(chainId).quoteToken.symbol}`);
        expect(r.signature).toMatch(/^0x[0-9a-f]{130}$/);
        expect(r.keyId).not.toBe('');
      }
      const expired = held.find((r) => r.reason === 'QuoteExpired')!;
      expect(Number(expired.args.blockTimestamp)).toBeGreaterThan(
        Number(expired.args.quoteTimestamp) + sys.chain(chainId).validitySeconds,
      );
      const wrong = held.find((r) => r.reason === 'WrongSender')!;
      expect(wrong.args.sender).toBe(wrong.user);
      expect(wrong.args.userAddress).toBe(sys.chain(chainId).testUser.address.toLowerCase());
      expect(held.find((r) => r.reason === 'InsufficientReserve')!.args.reserve).toBe('0');
    }
    const metrics = await (await fetch(ledgerOf(CHAINS[0]!).metricsUrl!)).text();
    expect(metrics).toMatch(/ledger_reverted_calls_total\{[^}]*integrator="alpha"[^}]*reason="QuoteExpired"[^}]*\} 1/);
  });

  it("behavior: `fills`: each signature's fate once its window has passed, and figures per integrator that add up", async () => {
    // Every window closed in each ledger's time (the last signatures were given a few seconds after the first).
    const deadline = Math.max(...(await signedRecords()).map((r) => r.deadline!));
    for (const chainId of CHAINS) await until(async () => ((await cursorOf(chainId))?.time ?? 0) > deadline, 120_000);
    const { code, out } = await fillsCli.run(['--from', day(-1), '--to', day(1), '--format', 'json']);
    expect(code).toBe(0);
    const report = JSON.parse(out) as FillReport;
    for (const chainId of CHAINS) {
      // All but the request kept for the reorg case (beta's, unused until then).
      const orphan = cases.get(chainId)!.orphan.requestId;
      const held = report.fates.filter((f) => f.chainId === chainId && f.clientRequestId !== orphan);
      const project = (f: { clientRequestId?: string; integratorId: string; fate: string; reason?: string }) => ({
        clientRequestId: f.clientRequestId,
        integratorId: f.integratorId,
        fate: f.fate,
        ...(f.reason ? { reason: f.reason } : {}),
      });
      const byRequest = (a: { clientRequestId?: string }, b: { clientRequestId?: string }) =>
        a.clientRequestId! < b.clientRequestId! ? -1 : 1;
      expect(held.map(project).sort(byRequest)).toEqual(cases.get(chainId)!.fates.map(project).sort(byRequest));
      for (const f of held.filter((h) => h.fate === 'executed')) {
        // The swap's block time, read from the chain here, less the signed timestamp. Not bounded
        // below by 0: anvil, on a loaded machine, has stamped the block of a swap a second before
        // the second the signer signed it in (delaySeconds -1).
        const block = await cases.get(chainId)!.pub.getBlock({ blockNumber: BigInt(f.blockNumber!) });
        expect([f.blockTime, f.delaySeconds]).toEqual([
          Number(block.timestamp),
          Number(block.timestamp) - f.quoteTimestamp,
        ]);
        expect(f.delaySeconds).toBeLessThanOrEqual(VALIDITY_SECONDS);
        expect(f.delayBlocks).toBeGreaterThanOrEqual(0);
        expect(f.firm).toBe(true);
        expect(f.executedVsQuotedBps).toBeDefined();
      }
      // The figures add up, per integrator, to the fates.
      for (const id of ['alpha', 'beta']) {
        const mine = held.filter((f) => f.integratorId === id);
        const rows = report.figures.filter((r) => r.integratorId === id && r.chainId === chainId);
        const sum = (k: 'signatures' | 'executed' | 'reverted' | 'unused') => rows.reduce((t, r) => t + r[k], 0);
        expect(rows.map((r) => r.pair)).toEqual([`WETH/${sys.chain(chainId).quoteToken.symbol}`]);
        expect(sum('signatures')).toBe(mine.length + (id === 'beta' ? 1 : 0));
        expect(sum('executed') + sum('reverted') + sum('unused')).toBe(sum('signatures'));
        expect(sum('executed')).toBe(mine.filter((f) => f.fate === 'executed').length);
      }
      const alpha = report.figures.find((r) => r.integratorId === 'alpha' && r.chainId === chainId)!;
      expect(alpha.fillRate).toBeCloseTo(alpha.executed / alpha.firm, 10);
      expect(alpha.revertRate).toBeCloseTo(alpha.reverted / alpha.attempted, 10);
      expect(alpha.revertsByReason).toEqual({ QuoteExpired: 1, InsufficientOutput: 2, InsufficientReserve: 1 });

      // The live figures (judged by the ledger at each deadline) are those of `fills` for the same
      // signatures, but for the call sent after the window (QuoteExpired, mined after the block
      // that judged its signature): unused when judged, reverted in `fills`, never counted back.
      for (const id of ['alpha', 'beta']) {
        const mine = report.fates.filter((f) => f.chainId === chainId && f.integratorId === id && f.firm);
        const live = (f: (typeof mine)[number]) =>
          f.fate === 'reverted' && f.blockTime! > f.deadline! + 1 ? 'unused' : f.fate;
        for (const fate of ['executed', 'reverted', 'unused'] as const)
          expect([id, fate, await metricOf(chainId, 'ledger_firm_signatures_total', { integrator: id, fate })]).toEqual(
            [id, fate, mine.filter((f) => live(f) === fate).length],
          );
        const delays = mine.filter((f) => f.fate === 'executed').map((f) => f.delaySeconds!);
        const histogram = (series: string) =>
          metricOf(chainId, `ledger_sign_to_execution_seconds_${series}`, { integrator: id });
        expect([id, await histogram('count'), await histogram('sum')]).toEqual([
          id,
          delays.length,
          delays.reduce((t, d) => t + d, 0),
        ]);
        // alpha's late call is the case where they differ.
        expect(mine.filter((f) => live(f) !== f.fate)).toHaveLength(id === 'alpha' ? 1 : 0);
      }
    }
    // One integrator, one chain; the table and the CSV of the same report.
    const beta = await fillsCli.run(['--from', day(-1), '--to', day(1), '--integrator', 'beta', '--chain', '56']);
    expect(beta.out).toMatch(/beta\s+56\s+WETH\/\S+\s+/);
    expect(beta.out).not.toMatch(/alpha/);
    const csv = await fillsCli.run(['--from', day(-1), '--to', day(1), '--chain', '8453', '--format', 'csv']);
    expect(csv.out.trim().split('\n')).toHaveLength(1 + report.fates.filter((f) => f.chainId === 8453).length);
  });

  it("behavior: `GET /v2/fills`: each integrator reads with its own key exactly its fates as `fills` gives them, nothing of the other's", async () => {
    const report = JSON.parse(
      (await fillsCli.run(['--from', day(-1), '--to', day(1), '--format', 'json'])).out,
    ) as FillReport;
    // The test's signatures are all of the last hour.
    const to = Math.floor(Date.now() / 1000) + 60;
    const project = (f: FillFate) => [
      f.requestId,
      f.clientRequestId,
      f.fate,
      f.reason,
      f.txHash,
      f.executions,
      f.reverts,
    ];
    for (const chainId of CHAINS) {
      for (const id of ['alpha', 'beta']) {
        const read: FillFate[] = [];
        for (let cursor: string | undefined; ;) {
          const res = await request(sys.gateway.url)
            .get(`/v2/fills?chainId=${chainId}&from=${to - 3_600}&to=${to}${cursor ? `&cursor=${cursor}` : ''}`)
            .set('X-API-KEY', apiKeys.get(id)!);
          expect(res.status).toBe(200);
          const page = res.body as FillsResponse;
          read.push(...page.fates);
          if (page.next === null) break;
          cursor = page.next;
        }
        const own = report.fates.filter((f) => f.chainId === chainId && f.integratorId === id);
        expect(read.map(project)).toEqual(own.map(project));
        // Its executed, reverted (with each reason) and unused signatures; none of the other's.
        const mine = cases.get(chainId)!.fates.filter((f) => f.integratorId === id);
        const fateOf = (clientRequestId: string) => read.find((f) => f.clientRequestId === clientRequestId);
        for (const f of mine)
          expect([f.clientRequestId, fateOf(f.clientRequestId)?.fate, fateOf(f.clientRequestId)?.reason]).toEqual([
            f.clientRequestId,
            f.fate,
            f.reason,
          ]);
        const theirs = cases.get(chainId)!.fates.filter((f) => f.integratorId !== id);
        for (const f of theirs) expect(fateOf(f.clientRequestId)).toBeUndefined();
      }
    }
  });

  it('behavior: a reorg that removes a reverted transaction removes its record and its fate', async () => {
    const chainId = CHAINS[0]!;
    const { pub, stranger, orphan } = cases.get(chainId)!;
    const fateOf = async () =>
      (
        JSON.parse((await fillsCli.run(['--from', day(-1), '--to', day(1), '--format', 'json'])).out) as FillReport
      ).fates.find((f) => f.clientRequestId === orphan.requestId)!;
    expect(await fateOf()).toMatchObject({ fate: 'unused' });
    const snapshot = (await pub.request({ method: 'evm_snapshot' as never })) as Hex;
    const hash = await stranger.sendTransaction({
      to: sys.chain(chainId).contracts.router as Hex,
      data: orphan.calldata,
      gas: 600_000n,
    });
    const receipt = await pub.waitForTransactionReceipt({ hash });
    expect(receipt.status).toBe('reverted');
    const held = async () => (await revertsOf(chainId)).some((r) => r.txHash === hash.toLowerCase());
    await until(held, 60_000);
    expect(await fateOf()).toMatchObject({ fate: 'reverted', reason: 'WrongSender', integratorId: 'beta' });
    await pub.request({ method: 'evm_revert' as never, params: [snapshot] as never });
    await until(async () => (await pub.getBlockNumber()) > receipt.blockNumber + 2n, 30_000);
    await until(async () => !(await held()), 60_000);
    expect(await fateOf()).toMatchObject({ fate: 'unused', reverts: 0 });
    const metrics = await (await fetch(ledgerOf(chainId).metricsUrl!)).text();
    expect(metrics).toMatch(/ledger_orphaned_reverts_total\{[^}]*\} [1-9]/);
  });
});
