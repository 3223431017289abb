/**
 * A quote signed by a key generated in a real SoftHSM2 token (never extractable) executes a
 * swap on the devnet: the router's API signer is set to the token key's address (the key
 * rotation an operator does), the signer app signs with the token, and the user's raw calldata
 * swap pays the reference curve's output. After the rotation, a quote signed with the retired
 * in-memory key is refused by the router. The chain side is driven with viem.
 */
import { PmmRouterArtifact, TestTokenArtifact, swapOut } from '@pmm/contracts';
import { createDigestSigner, openPkcs11Signer, parsePkcs11Uri, type Pkcs11Signer } from '@pmm/core';
import { deployerWallet, seedPlan, type ChainStack } from '@pmm/devnet';
import { encodeSwapCalldata, signSwapQuote } from '@pmm/protocol';
import { chainClients, devnetRegistry, startSoftHsm, startSystem, type SoftHsm, type System } from '@pmm/testkit';
import request from 'supertest';
import { toFunctionSelector, type Hex } from 'viem';
import { INTERNAL_TOKEN, startFixture, type Fixture } from '../support/fixture';

jest.setTimeout(180_000);

const PIN = '57721566';
const routerAbi = PmmRouterArtifact.abi;
const erc20Abi = TestTokenArtifact.abi;

let sys: System;
let hsm: SoftHsm;
let tokenKey: Pkcs11Signer;
let f: Fixture;
let c: ChainStack;

beforeAll(async () => {
  hsm = startSoftHsm();
  const token = hsm.initToken('api-signer', PIN);
  hsm.generateKey(token, PIN, 'api-8453');
  tokenKey = await openPkcs11Signer({ key: parsePkcs11Uri(hsm.uri(token, 'api-8453')), pin: PIN });
  // The chain and a private Redis; the signer app runs in this process.
  sys = await startSystem({ chains: [8453], blockIntervalMs: 0, services: [] });
  c = sys.chain(8453);
  // The rotation: the router's owner trusts the token's key from now on.
  const cl = chainClients(c);
  const hash = await cl.wallet(deployerWallet().privateKey).writeContract({
    address: c.contracts.router as Hex,
    abi: routerAbi,
    functionName: 'setApiSigner',
    args: [tokenKey.address as Hex],
  });
  expect((await cl.publicClient.waitForTransactionReceipt({ hash })).status).toBe('success');
  f = await startFixture({
    redisUrl: sys.redisUrl,
    redisRecordsUrl: sys.redisRecordsUrl,
    chains: [8453],
    registry: () => devnetRegistry(c),
    whitelist: [c.testUser.address],
    now: Date.now,
    override: (deps) => ({ ...deps, signers: new Map([[8453, tokenKey]]) }),
  });
}, 180_000);

afterAll(async () => {
  await f?.close();
  await tokenKey?.close();
  await sys?.stop();
  hsm?.remove();
});

const balanceOf = (token: string) =>
  chainClients(c).publicClient.readContract({
    address: token as Hex,
    abi: erc20Abi,
    functionName: 'balanceOf',
    args: [c.testUser.address as Hex],
  }) as Promise<bigint>;

async function approve(token: string, amount: bigint): Promise<void> {
  const cl = chainClients(c);
  const hash = await cl.wallet(c.testUser.privateKey).writeContract({
    address: token as Hex,
    abi: erc20Abi,
    functionName: 'approve',
    args: [c.contracts.router as Hex, amount],
  });
  expect((await cl.publicClient.waitForTransactionReceipt({ hash })).status).toBe('success');
}

describe('a quote signed in a PKCS#11 token on the devnet', () => {
  it('behavior: the calldata signed by the token key executes the swap and pays the reference curve output', async () => {
    const weth = seedPlan(8453).baseTokens[0]!;
    const quote = c.quoteToken.address;
    const base = c.baseTokens[0]!.address;
    const amountIn = 3_000n * 10n ** BigInt(c.quoteToken.decimals);
    const expected = swapOut(weth.curve, 'ask', amountIn, 30n);
    const res = await request(f.app)
      .post('/v2/swap/sign')
      .set('X-Internal-Token', INTERNAL_TOKEN)
      .set('X-Integrator-Id', 'acme')
      .set('Content-Type', 'application/json')
      .send(
        JSON.stringify({
          chainId: 8453,
          tokenIn: quote,
          tokenOut: base,
          fee: '30',
          userAddress: c.testUser.address,
          amountIn: amountIn.toString(),
          minAmountOut: expected.toString(),
        }),
      );
    expect(res.status).toBe(200);
    await approve(quote, amountIn);
    const [inBefore, outBefore] = await Promise.all([balanceOf(quote), balanceOf(base)]);
    const cl = chainClients(c);
    const hash = await cl.wallet(c.testUser.privateKey).sendTransaction({
      to: c.contracts.router as Hex,
      data: (res.body as { calldata: Hex }).calldata,
    });
    expect((await cl.publicClient.waitForTransactionReceipt({ hash })).status).toBe('success');
    const [inAfter, outAfter] = await Promise.all([balanceOf(quote), balanceOf(base)]);
    expect(inBefore - inAfter).toBe(amountIn);
    expect(outAfter - outBefore).toBe(expected);
  });

  it('error: after the rotation, a quote signed with the retired in-memory key is refused by the router', async () => {
    const quote = c.quoteToken.address;
    const base = c.baseTokens[0]!.address;
    const amountIn = 1_000n * 10n ** BigInt(c.quoteToken.decimals);
    const timestamp = BigInt(Math.floor(Date.now() / 1000));
    const old = signSwapQuote(createDigestSigner(c.apiSigner.privateKey), {
      tokenIn: quote,
      tokenOut: base,
      timestamp,
      fee: 30n,
      originRate: 0n,
      userAddress: c.testUser.address,
    });
    const data = encodeSwapCalldata({
      tokenIn: quote,
      amountIn,
      tokenOut: base,
      minAmountOut: 0n,
      quoteTimestamp: timestamp,
      verificationData: old.verificationData,
    });
    await approve(quote, amountIn);
    const error = await chainClients(c)
      .publicClient.call({ account: c.testUser.address as Hex, to: c.contracts.router as Hex, data: data as Hex })
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    // InvalidSignature() is the router's refusal of a signer that is not its apiSigner.
    const selector = toFunctionSelector('InvalidSignature()');
    expect(String((error as Error | undefined)?.message ?? 'no revert')).toContain(selector);
  });
});
