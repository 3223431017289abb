/**
 * The ledger's reverted router calls, end to end on the devnet, on every chain (processes as
 * `npm start` runs them: three anvil chains mining a block a second, their indexers, the signer,
 * the gateway and a ledger per chain). Two integrators sign through the gateway; the test user
 * then sends what aggregators' users send: a swap that executes, and one that reverts for each
 * reason the router has (mined after its window; a minimum above what the curve pays; a router
 * drained of the token it pays; sent by another address; a signed field changed after signing),
 * one that reverts inside an executor contract, and one executor's optional leg that reverts in
 * a transaction that goes on. Each reverted call must be in the chain's ledger with the router's
 * error and who asked for its signature; nothing else is. A reorg that removes a reverted
 * transaction removes its record.
 */
import { TestExecutorArtifact, TestTokenArtifact } from '@pmm/contracts';
import {
  DEFAULT_KEY_PREFIX,
  createRedis,
  parseLedgerRevert,
  redisKeys,
  redisReady,
  type LedgerRevert,
  type RedisClient,
} from '@pmm/core';
import { DEVNET_VALIDITY_SECONDS, deployerWallet, type ChainStack } from '@pmm/devnet';
import { ApiKeyStore } from '@pmm/gateway';
import { decodeSwapCalldata, decodeVerificationData, encodeSwapCalldata } from '@pmm/protocol';
import { chainClients, startSystem, until, type System } from '@pmm/testkit';
import request from 'supertest';
import { encodeAbiParameters, getContractAddress, keccak256, type Abi, type Hex } from 'viem';
import { ledgerCursorOf } from '../support/ledger-devnet';

jest.setTimeout(420_000);

const CHAINS = [8453, 56, 4663];
const keys = redisKeys(DEFAULT_KEY_PREFIX);
const erc20Abi = TestTokenArtifact.abi as Abi;
/** TestToken's `balanceOf` mapping is its storage slot 3 (name, symbol, totalSupply before it). */
const BALANCE_SLOT = 3n;

let sys: System;
let redis: RedisClient;
const apiKeys = new Map<string, string>();

beforeAll(async () => {
  sys = await startSystem({
    chains: CHAINS,
    blockIntervalMs: 1_000,
    services: ['indexer', 'signer', 'gateway', 'ledger'],
  });
  redis = createRedis(sys.redisRecordsUrl, { name: 'ledger-reverts-e2e' });
  await redisReady(redis);
});

afterAll(async () => {
  redis?.disconnect();
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
  const sign = async (integratorId: string, userAddress: string = stack.testUser.address) => {
    nth += 1n;
    const amountIn = 100n * unit + nth;
    const res = await request(sys.gateway.url)
      .post('/v2/swap/sign')
      .set('X-API-KEY', apiKeys.get(integratorId)!)
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
    return res.body as { calldata: Hex; verificationData: Hex; timestamp: number | string };
  };
  const withArgs = (calldata: Hex, change: Partial<ReturnType<typeof decodeSwapCalldata>>) =>
    encodeSwapCalldata({ ...decodeSwapCalldata(calldata), ...change }) as Hex;
  const send = (data: Hex, from = user) => from.sendTransaction({ to: router, data, gas: 600_000n });

  const expected: Expected[] = [];
  const direct = (txHash: string, reason: string, integratorId: string, more: Partial<Expected> = {}) =>
    expected.push({ txHash, callIndex: 0, reason, integratorId, via: 'direct', txReverted: true, ...more });

  // Signed now, sent once its window has passed.
  const late = await sign('alpha');

  // Executes: no revert record.
  const executed = await mined(await send((await sign('alpha')).calldata), 'success');

  // A minimum above what the curve pays.
  const greedy = withArgs((await sign('alpha')).calldata, { minAmountOut: 2n ** 200n });
  direct((await mined(await send(greedy), 'reverted')).transactionHash, 'InsufficientOutput', 'alpha');

  // Sent by an address other than the one signed for.
  const stolen = (await sign('beta')).calldata;
  direct((await mined(await send(stolen, stranger), 'reverted')).transactionHash, 'WrongSender', 'beta');

  // The fee changed after signing: the signature no longer matches. The record is still beta's.
  const signed = await sign('beta');
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

  // Inside an executor: its one swap's minimum too high, the whole transaction reverts.
  const leg = (s: Awaited<ReturnType<typeof sign>>, minOutAmount = 0n) => {
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
  const nested = await user.writeContract({
    address: executor,
    abi: TestExecutorArtifact.abi,
    functionName: 'swapOne',
    args: [leg(await sign('beta', executor), 2n ** 200n)],
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
  const split = await user.writeContract({
    address: executor,
    abi: TestExecutorArtifact.abi,
    functionName: 'swapBatch',
    args: [[leg(await sign('alpha', executor)), leg(await sign('alpha', executor), 2n ** 200n)], true],
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
  await sign('beta');

  // Mined after its window.
  const deadline = Number(late.timestamp) + DEVNET_VALIDITY_SECONDS;
  await until(async () => Number((await pub.getBlock()).timestamp) > deadline + 1, 120_000);
  direct((await mined(await send(late.calldata), 'reverted')).transactionHash, 'QuoteExpired', 'alpha');

  const last = await pub.getBlockNumber();
  await until(async () => (await ledgerCursorOf(redis, keys, chainId)) >= Number(last), 60_000);
  return { expected, executed: executed.transactionHash, pub, user, stranger, stolen };
}

const ledgerOf = (chainId: number) => sys.processesOf('ledger').find((p) => p.name === `ledger ${chainId}`)!;
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
        Number(expired.args.quoteTimestamp) + DEVNET_VALIDITY_SECONDS,
      );
      const wrong = held.find((r) => r.reason === 'WrongSender')!;
      expect(wrong.args.sender).toBe(wrong.user);
      expect(wrong.args.userAddress).toBe(sys.chain(chainId).testUser.address.toLowerCase());
      expect(held.find((r) => r.reason === 'InsufficientReserve')!.args.reserve).toBe('0');
    }
    const metrics = await (await fetch(ledgerOf(CHAINS[0]!).metricsUrl!)).text();
    expect(metrics).toMatch(/ledger_reverted_calls_total\{[^}]*integrator="alpha"[^}]*reason="QuoteExpired"[^}]*\} 1/);
  });

  it('behavior: a reorg that removes a reverted transaction removes its record', async () => {
    const chainId = CHAINS[0]!;
    const { pub, stranger, stolen } = cases.get(chainId)!;
    const snapshot = (await pub.request({ method: 'evm_snapshot' as never })) as Hex;
    const hash = await stranger.sendTransaction({
      to: sys.chain(chainId).contracts.router as Hex,
      data: stolen,
      gas: 600_000n,
    });
    const receipt = await pub.waitForTransactionReceipt({ hash });
    expect(receipt.status).toBe('reverted');
    const held = async () => (await revertsOf(chainId)).some((r) => r.txHash === hash.toLowerCase());
    await until(held, 60_000);
    await pub.request({ method: 'evm_revert' as never, params: [snapshot] as never });
    await until(async () => (await pub.getBlockNumber()) > receipt.blockNumber + 2n, 30_000);
    await until(async () => !(await held()), 60_000);
    const metrics = await (await fetch(ledgerOf(chainId).metricsUrl!)).text();
    expect(metrics).toMatch(/ledger_orphaned_reverts_total\{[^}]*\} [1-9]/);
  });
});
