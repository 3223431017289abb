/**
 * Drill on the devnet (docs/operations/halts.md#the-on-chain-stop): a halt stops new signatures but
 * cannot recall those already given out; the router's owner switching its signer away does.
 * Two quotes are signed; the chain is halted (new signs: 503 HALTED); the first quote still
 * executes (the exposure a halt leaves); the owner calls setApiSigner to an address with no key;
 * the second quote, signed before both, reverts with InvalidSignature.
 */
import { PmmRouterArtifact, TestTokenArtifact } from '@pmm/contracts';
import { deployerWallet } from '@pmm/devnet';
import { DurableWrites, HaltStore, HaltView, createMetrics } from '@pmm/core';
import request from 'supertest';
import { createPublicClient, createWalletClient, defineChain, http, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { devnetRegistry, revertName, startSystem, type System } from '@pmm/testkit';
import { createApp } from '../../src';
import { INTERNAL_TOKEN, startFixture, type Fixture } from '../support/fixture';

const CHAIN = 8453;
const DEAD = '0x000000000000000000000000000000000000dEaD';
const routerAbi = PmmRouterArtifact.abi;
let sys: System;
let f: Fixture;
let view: HaltView;

afterAll(async () => {
  await view?.stop();
  await f?.close();
  await sys?.stop();
});

it('drill: after a halt and the on-chain stop, a signature issued before both reverts; before the stop it still executed', async () => {
  sys = await startSystem({ chains: [CHAIN], blockIntervalMs: 0, services: [] });
  const stack = sys.chain(CHAIN);
  f = await startFixture({
    chains: [CHAIN],
    redisUrl: sys.redisUrl,
    redisRecordsUrl: sys.redisRecordsUrl,
    signerKeys: { [CHAIN]: stack.apiSigner.privateKey as Hex },
    registry: () => devnetRegistry(stack),
    whitelist: [stack.testUser.address],
    now: Date.now,
  });
  view = new HaltView({ redis: f.records, subscriber: f.recordsSubscriber, keys: f.keys });
  await view.start();
  const app = createApp({ ...f.deps, halts: view, metrics: createMetrics('stop-drill', { defaultMetrics: false }) });
  const chain = defineChain({
    id: CHAIN,
    name: 'devnet',
    nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
    rpcUrls: { default: { http: [stack.rpcUrl] } },
  });
  const transport = http(stack.rpcUrl, { retryCount: 0 });
  const pub = createPublicClient({ chain, transport, pollingInterval: 50 });
  const user = createWalletClient({ chain, transport, account: privateKeyToAccount(stack.testUser.privateKey as Hex) });
  const owner = createWalletClient({
    chain,
    transport,
    account: privateKeyToAccount(deployerWallet().privateKey as Hex),
  });
  const quote = stack.quoteToken.address as Hex;
  const base = stack.baseTokens[0]!.address as Hex;
  const router = stack.contracts.router as Hex;
  const amountIn = 100n * 10n ** BigInt(stack.quoteToken.decimals);

  const sign = () =>
    request(app)
      .post('/v2/swap/sign')
      .set('X-Internal-Token', INTERNAL_TOKEN)
      .set('X-Integrator-Id', 'acme')
      .set('Content-Type', 'application/json')
      .send(
        JSON.stringify({
          chainId: CHAIN,
          tokenIn: quote,
          tokenOut: base,
          fee: '30',
          userAddress: stack.testUser.address,
          amountIn: amountIn.toString(),
        }),
      );
  const first = await sign();
  const second = await sign();
  expect([first.status, second.status]).toEqual([200, 200]);

  // 1. The halt: no new signature.
  const halt = { scope: { chainId: CHAIN }, reason: 'drill', by: 'drill', at: Date.now() };
  await DurableWrites.unconfirmed(f.records).run(() => new HaltStore(f.records, f.keys).halt(halt));
  await view.refresh();
  expect((await sign()).body.error.code).toBe('HALTED');

  const approve = await user.writeContract({
    address: quote,
    abi: TestTokenArtifact.abi,
    functionName: 'approve',
    args: [router, amountIn * 2n],
  });
  expect((await pub.waitForTransactionReceipt({ hash: approve })).status).toBe('success');
  const swap = (signed: { timestamp: number; verificationData: Hex }) =>
    user.writeContract({
      address: router,
      abi: routerAbi,
      functionName: 'swap',
      args: [quote, amountIn, base, 0n, BigInt(signed.timestamp), signed.verificationData],
    });
  // A halt alone: a signature given out before it still executes.
  const executed = await swap(first.body as { timestamp: number; verificationData: Hex });
  expect((await pub.waitForTransactionReceipt({ hash: executed })).status).toBe('success');

  // 2. The on-chain stop: the owner switches the router's signer away.
  const stop = await owner.writeContract({
    address: router,
    abi: routerAbi,
    functionName: 'setApiSigner',
    args: [DEAD],
  });
  expect((await pub.waitForTransactionReceipt({ hash: stop })).status).toBe('success');
  expect(await revertName(swap(second.body as { timestamp: number; verificationData: Hex }), routerAbi, pub)).toBe(
    'InvalidSignature',
  );
}, 180_000);
