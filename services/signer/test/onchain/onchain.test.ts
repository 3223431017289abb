/**
 * End to end on the devnet (three real anvil chains with the reference router): what the
 * signer returns executes a swap, both as the six-argument call and as the raw calldata, and
 * pays exactly the reference curve's output net of the fee; a signature for one chain is
 * rejected by another chain's router; the answer's deadline is the router's own: a swap in a
 * block at the deadline executes, one in a later block reverts.
 * The chain side is driven with viem, not with the code under test.
 */
import { PmmRouterArtifact, TestTokenArtifact, swapOut } from '@pmm/contracts';
import { seedPlan, type ChainStack } from '@pmm/devnet';
import request from 'supertest';
import {
  createPublicClient,
  createWalletClient,
  decodeEventLog,
  defineChain,
  http,
  type Account,
  type Chain,
  type Hex,
  type PublicClient,
  type Transport,
  type WalletClient,
} from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { devnetRegistry, revertName, startSystem, type System } from '@pmm/testkit';
import { INTERNAL_TOKEN, startFixture, type Fixture } from '../support/fixture';

const CHAIN_IDS = [8453, 56, 4663] as const;
const ORIGIN_RATES: Record<number, bigint> = { 8453: 0n, 56: 7n, 4663: (1n << 255n) + 1n };
const FEE = 30n;
const routerAbi = PmmRouterArtifact.abi;
const erc20Abi = TestTokenArtifact.abi;

let sys: System;
let f: Fixture;

interface ChainCtx {
  stack: ChainStack;
  pub: PublicClient;
  user: WalletClient<Transport, Chain, Account>;
}
const ctx = new Map<number, ChainCtx>();
const chainCtx = (id: number): ChainCtx => {
  const c = ctx.get(id);
  if (!c) throw new Error(`chain ${id} not set up`);
  return c;
};

beforeAll(async () => {
  // The chains and a private Redis; the signer app runs in this process.
  sys = await startSystem({ chains: [...CHAIN_IDS], blockIntervalMs: 0, services: [] });
  for (const id of CHAIN_IDS) {
    const stack = sys.chain(id);
    const chain = defineChain({
      id,
      name: `devnet-${id}`,
      nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
      rpcUrls: { default: { http: [stack.rpcUrl] } },
    });
    const transport = http(stack.rpcUrl, { retryCount: 0 });
    ctx.set(id, {
      stack,
      pub: createPublicClient({ chain, transport, pollingInterval: 50 }),
      user: createWalletClient({
        chain,
        transport,
        pollingInterval: 50,
        account: privateKeyToAccount(stack.testUser.privateKey as Hex),
      }),
    });
  }
  const stackOf = (id: number) => chainCtx(id).stack;
  f = await startFixture({
    redisUrl: sys.redisUrl,
    redisRecordsUrl: sys.redisRecordsUrl,
    signerKeys: Object.fromEntries(CHAIN_IDS.map((id) => [id, stackOf(id).apiSigner.privateKey])),
    registry: (id) => devnetRegistry(stackOf(id)),
    whitelist: CHAIN_IDS.map((id) => stackOf(id).testUser.address),
    originRates: ORIGIN_RATES,
    // The devnet allows blocks with the same timestamp, so its clock is the wall clock.
    now: Date.now,
  });
}, 180_000);

afterAll(async () => {
  await f?.close();
  await sys?.stop();
});

interface SignBody {
  chainId: number;
  tokenIn: string;
  tokenOut: string;
  fee: string;
  userAddress: string;
  amountIn?: string;
  minAmountOut?: string;
}
interface Signed {
  verificationData: Hex;
  timestamp: number;
  deadline: number;
  calldata?: Hex;
}

async function sign(body: SignBody): Promise<Signed> {
  const res = await request(f.app)
    .post('/v2/swap/sign')
    .set('X-Internal-Token', INTERNAL_TOKEN)
    .set('X-Integrator-Id', 'acme')
    .set('Content-Type', 'application/json')
    .send(JSON.stringify(body));
  if (res.status !== 200) throw new Error(`sign failed ${res.status}: ${res.text}`);
  return res.body as Signed;
}

const balanceOf = (c: ChainCtx, token: string) =>
  c.pub.readContract({
    address: token as Hex,
    abi: erc20Abi,
    functionName: 'balanceOf',
    args: [c.stack.testUser.address as Hex],
  }) as Promise<bigint>;

async function approve(c: ChainCtx, token: string, amount: bigint): Promise<void> {
  const hash = await c.user.writeContract({
    address: token as Hex,
    abi: erc20Abi,
    functionName: 'approve',
    args: [c.stack.contracts.router as Hex, amount],
  });
  const receipt = await c.pub.waitForTransactionReceipt({ hash });
  expect(receipt.status).toBe('success');
}

/** The Swapped event of a receipt, decoded with the router ABI. */
function swappedEvent(logs: readonly { address: string; data: Hex; topics: readonly Hex[] }[], router: string) {
  for (const log of logs) {
    if (log.address.toLowerCase() !== router.toLowerCase()) continue;
    const ev = decodeEventLog({ abi: routerAbi, data: log.data, topics: log.topics as [Hex, ...Hex[]] });
    if (ev.eventName === 'Swapped')
      return ev.args as { amountOut: bigint; fee: bigint; originRate: bigint; quoteTimestamp: bigint };
  }
  throw new Error('no Swapped event');
}

describe.each(CHAIN_IDS)('chain %i', (chainId) => {
  const plan = seedPlan(chainId);
  const weth = plan.baseTokens[0]!;

  it('behavior: the six-argument swap (quote → WETH) pays the reference curve output net of the fee', async () => {
    const c = chainCtx(chainId);
    const quote = c.stack.quoteToken.address;
    const base = c.stack.baseTokens[0]!.address;
    const amountIn = 4_500n * 10n ** BigInt(plan.quoteToken.decimals); // ~1.5 WETH: a partial first tier (floor rounding)
    const expected = swapOut(weth.curve, 'ask', amountIn, FEE);
    const signed = await sign({
      chainId,
      tokenIn: quote,
      tokenOut: base,
      fee: FEE.toString(),
      userAddress: c.stack.testUser.address,
      amountIn: amountIn.toString(),
      minAmountOut: expected.toString(),
    });
    await approve(c, quote, amountIn);
    const [inBefore, outBefore] = await Promise.all([balanceOf(c, quote), balanceOf(c, base)]);
    const hash = await c.user.writeContract({
      address: c.stack.contracts.router as Hex,
      abi: routerAbi,
      functionName: 'swap',
      args: [quote as Hex, amountIn, base as Hex, expected, BigInt(signed.timestamp), signed.verificationData],
    });
    const receipt = await c.pub.waitForTransactionReceipt({ hash });
    expect(receipt.status).toBe('success');
    const [inAfter, outAfter] = await Promise.all([balanceOf(c, quote), balanceOf(c, base)]);
    expect(inBefore - inAfter).toBe(amountIn);
    expect(outAfter - outBefore).toBe(expected);
    const ev = swappedEvent(receipt.logs, c.stack.contracts.router);
    expect(ev).toMatchObject({
      amountOut: expected,
      fee: FEE,
      originRate: ORIGIN_RATES[chainId],
      quoteTimestamp: BigInt(signed.timestamp),
    });
  });

  it('behavior: the raw calldata (WETH → quote, across tiers) executes as is and pays the expected amount', async () => {
    const c = chainCtx(chainId);
    const quote = c.stack.quoteToken.address;
    const base = c.stack.baseTokens[0]!.address;
    const amountIn = 12n * 10n ** BigInt(weth.decimals) + 1n; // past the first 10-WETH tier, odd wei
    const expected = swapOut(weth.curve, 'bid', amountIn, 10_000n);
    const signed = await sign({
      chainId,
      tokenIn: base,
      tokenOut: quote,
      fee: '10000',
      userAddress: c.stack.testUser.address,
      amountIn: amountIn.toString(),
    });
    await approve(c, base, amountIn);
    const [inBefore, outBefore] = await Promise.all([balanceOf(c, base), balanceOf(c, quote)]);
    const hash = await c.user.sendTransaction({ to: c.stack.contracts.router as Hex, data: signed.calldata! });
    const receipt = await c.pub.waitForTransactionReceipt({ hash });
    expect(receipt.status).toBe('success');
    const [inAfter, outAfter] = await Promise.all([balanceOf(c, base), balanceOf(c, quote)]);
    expect(inBefore - inAfter).toBe(amountIn);
    expect(outAfter - outBefore).toBe(expected);
    expect(swappedEvent(receipt.logs, c.stack.contracts.router).fee).toBe(10_000n);
  });

  it('error: a tampered response (fee lowered in verificationData) is rejected by the router', async () => {
    const c = chainCtx(chainId);
    const quote = c.stack.quoteToken.address;
    const base = c.stack.baseTokens[0]!.address;
    const signed = await sign({
      chainId,
      tokenIn: base,
      tokenOut: quote,
      fee: '30',
      userAddress: c.stack.testUser.address,
    });
    // Word 0 of verificationData is the fee: 30 (0x1e) → 0.
    const tampered = (signed.verificationData.slice(0, 2 + 62) + '00' + signed.verificationData.slice(2 + 64)) as Hex;
    expect(tampered).not.toBe(signed.verificationData);
    const name = await revertName(
      c.pub.simulateContract({
        account: c.user.account,
        address: c.stack.contracts.router as Hex,
        abi: routerAbi,
        functionName: 'swap',
        args: [base as Hex, 1n, quote as Hex, 0n, BigInt(signed.timestamp), tampered],
      }),
      routerAbi,
    );
    expect(name).toBe('InvalidSignature');
  });
});

describe('across chains', () => {
  it('error: a signature made for one chain is rejected by every other chain router (InvalidSignature)', async () => {
    for (const from of CHAIN_IDS) {
      for (const to of CHAIN_IDS) {
        if (from === to) continue;
        const src = chainCtx(from);
        const dst = chainCtx(to);
        // Signed on `from` for the user of `to`, so that only the signer key differs.
        const signed = await sign({
          chainId: from,
          tokenIn: src.stack.baseTokens[0]!.address,
          tokenOut: src.stack.quoteToken.address,
          fee: '30',
          userAddress: dst.stack.testUser.address,
        });
        const args = [
          dst.stack.baseTokens[0]!.address as Hex,
          10n ** 15n,
          dst.stack.quoteToken.address as Hex,
          0n,
          BigInt(signed.timestamp),
          signed.verificationData,
        ] as const;
        const name = await revertName(
          dst.pub.simulateContract({
            account: dst.user.account,
            address: dst.stack.contracts.router as Hex,
            abi: routerAbi,
            functionName: 'swap',
            args,
          }),
          routerAbi,
        );
        expect({ from, to, name }).toEqual({ from, to, name: 'InvalidSignature' });
      }
    }
    // Control: the routers' apiSigners really differ, and each is the signer's key for its chain.
    const signers = CHAIN_IDS.map((id) => f.signers.get(id)!.address);
    expect(new Set(signers).size).toBe(3);
    for (const id of CHAIN_IDS) {
      const c = chainCtx(id);
      const onChain = await c.pub.readContract({
        address: c.stack.contracts.router as Hex,
        abi: routerAbi,
        functionName: 'apiSigner',
      });
      expect(onChain).toBe(f.signers.get(id)!.address);
    }
  });
});

// Last: moving the chain clock forward would age every later signature.
describe('validity window', () => {
  it.each(CHAIN_IDS)(
    "error: chain %i: the deadline is timestamp + the router's validity(); a swap at the deadline executes, one after it reverts (QuoteExpired)",
    async (chainId) => {
      const c = chainCtx(chainId);
      const quote = c.stack.quoteToken.address;
      const base = c.stack.baseTokens[0]!.address;
      const amountIn = 10n ** BigInt(plan(chainId).baseTokens[0]!.decimals - 2);
      const signed = await sign({
        chainId,
        tokenIn: base,
        tokenOut: quote,
        fee: '30',
        userAddress: c.stack.testUser.address,
        amountIn: amountIn.toString(),
      });
      await approve(c, base, amountIn * 2n);
      const send = () =>
        c.user.sendTransaction({ to: c.stack.contracts.router as Hex, data: signed.calldata!, gas: 500_000n });
      const latest = async () => (await c.pub.getBlock({ blockTag: 'latest' })).timestamp;
      // The router's own figure, read independently of the signer.
      const validity = await c.pub.readContract({
        address: c.stack.contracts.router as Hex,
        abi: routerAbi,
        functionName: 'validity',
      });
      expect(signed.deadline).toBe(signed.timestamp + Number(validity));

      // In a block whose timestamp is the deadline: executes.
      await c.pub.request({ method: 'evm_setNextBlockTimestamp' as never, params: [signed.deadline] as never });
      const ok = await c.pub.waitForTransactionReceipt({ hash: await send() });
      expect(ok.status).toBe('success');
      expect(await latest()).toBe(BigInt(signed.deadline));

      // One second later the same calldata reverts: expired.
      await c.pub.request({ method: 'evm_increaseTime' as never, params: [1] as never });
      await c.pub.request({ method: 'evm_mine' as never, params: [] as never });
      expect(await latest()).toBeGreaterThan(BigInt(signed.deadline));
      const name = await revertName(
        c.pub.simulateContract({
          account: c.user.account,
          address: c.stack.contracts.router as Hex,
          abi: routerAbi,
          functionName: 'swap',
          args: [base as Hex, amountIn, quote as Hex, 0n, BigInt(signed.timestamp), signed.verificationData],
        }),
        routerAbi,
      );
      expect(name).toBe('QuoteExpired');
      expect(await revertName(send(), routerAbi, c.pub)).toBe('QuoteExpired');
    },
  );
});

function plan(chainId: number) {
  return seedPlan(chainId);
}
