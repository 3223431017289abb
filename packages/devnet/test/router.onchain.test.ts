/**
 * The reference router on a real EVM, driven by what @pmm/core signs: accepted when intact,
 * rejected with the documented custom error when anything is tampered with, expired, future-dated,
 * sent by someone else, over the fee cap or under the slippage floor. quote() is checked against
 * the bigint replica of the curve (reference-curve.ts) at and around every tier boundary.
 */
import {
  CurveError,
  PmmHelperArtifact,
  PmmRouterArtifact,
  TestTokenArtifact,
  VerificationImplArtifact,
  curveTiers,
  quoteOut,
  swapOut,
  type CurveSide,
  type RouterCurve,
} from '@pmm/contracts';
import { createDigestSigner } from '@pmm/core';
import { encodeSwapCalldata, signAmmVerification, signSwapQuote, type DigestSigner } from '@pmm/protocol';
import {
  decodeAbiParameters,
  encodeAbiParameters,
  encodeFunctionData,
  hashTypedData,
  maxUint256,
  parseEventLogs,
  recoverAddress,
  type Address,
  type Hex,
  type PublicClient,
} from 'viem';
import fc from 'fast-check';
import { deployerWallet, seedPlan, startDevnet, type ChainStack, type Devnet } from '../src';
import { chainClients, revertName as revertNameIn, type ChainClients } from '@pmm/testkit';

const SECP256K1_N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
const GAS = 1_000_000n; // fixed: skip estimateGas so that reverting transactions are really sent

let devnet: Devnet;

beforeAll(async () => {
  // Automine: one block per transaction, the fastest setting for transaction-driven tests.
  devnet = await startDevnet({ chains: [8453, 56], blockIntervalMs: 0 });
}, 120_000);

afterAll(async () => {
  await devnet?.stop();
});

interface Ctx {
  stack: ChainStack;
  clients: ChainClients;
  router: Address;
  quote: Address;
  weth: Address;
  wbtc: Address;
  user: Address;
  apiSigner: DigestSigner;
  quoter: DigestSigner;
  curves: Record<string, RouterCurve>;
}

function ctx(chainId: number): Ctx {
  const stack = devnet.stack.chains[String(chainId)];
  if (!stack) throw new Error(`chain ${chainId} not started`);
  const plan = seedPlan(chainId);
  const [weth, wbtc] = stack.baseTokens;
  if (!weth || !wbtc) throw new Error('base tokens missing');
  return {
    stack,
    clients: chainClients(stack),
    router: stack.contracts.router as Address,
    quote: stack.quoteToken.address as Address,
    weth: weth.address as Address,
    wbtc: wbtc.address as Address,
    user: stack.testUser.address as Address,
    apiSigner: createDigestSigner(stack.apiSigner.privateKey),
    quoter: createDigestSigner(stack.quoter.privateKey),
    curves: Object.fromEntries(plan.baseTokens.map((b, i) => [stack.baseTokens[i]?.address ?? '', b.curve])),
  };
}

async function latestTimestamp(c: Ctx): Promise<bigint> {
  return (await c.clients.publicClient.getBlock()).timestamp;
}

async function rpc(c: Ctx, method: string, params: unknown[]): Promise<unknown> {
  return c.clients.publicClient.request({ method: method as never, params: params as never });
}

async function balanceOf(c: Ctx, token: Address, who: Address): Promise<bigint> {
  return c.clients.publicClient.readContract({
    address: token,
    abi: TestTokenArtifact.abi,
    functionName: 'balanceOf',
    args: [who],
  });
}

async function reserveOf(c: Ctx, token: Address): Promise<bigint> {
  const [reserve] = await c.clients.publicClient.readContract({
    address: c.stack.contracts.helper as Address,
    abi: PmmHelperArtifact.abi,
    functionName: 'getReserveBalances',
    args: [[token]],
  });
  return reserve ?? 0n;
}

interface SwapCase {
  tokenIn: Address;
  tokenOut: Address;
  amountIn: bigint;
  minOut: bigint;
  timestamp: bigint;
  verificationData: Hex;
}

/** A swap signed by core for the test user (or `userAddress`). */
function signedSwap(
  c: Ctx,
  p: {
    tokenIn: Address;
    tokenOut: Address;
    amountIn: bigint;
    timestamp: bigint;
    fee?: bigint;
    originRate?: bigint;
    minOut?: bigint;
    userAddress?: Address;
  },
): SwapCase {
  const signed = signSwapQuote(c.apiSigner, {
    tokenIn: p.tokenIn,
    tokenOut: p.tokenOut,
    timestamp: p.timestamp,
    fee: p.fee ?? 30n,
    originRate: p.originRate ?? 123_456_789n,
    userAddress: p.userAddress ?? c.user,
  });
  return {
    tokenIn: p.tokenIn,
    tokenOut: p.tokenOut,
    amountIn: p.amountIn,
    minOut: p.minOut ?? 0n,
    timestamp: p.timestamp,
    verificationData: signed.verificationData as Hex,
  };
}

/** The router error a call (or, given the client, a mined transaction) reverted with. */
const revertName = (call: Promise<unknown>, client?: PublicClient): Promise<string> =>
  revertNameIn(call, PmmRouterArtifact.abi, client);

/** Sends the six-argument swap as a real transaction (fixed gas, so a revert is mined, not estimated away). */
function sendSwap(c: Ctx, s: SwapCase, from: string = c.stack.testUser.privateKey): Promise<Hex> {
  return c.clients.wallet(from).writeContract({
    address: c.router,
    abi: PmmRouterArtifact.abi,
    functionName: 'swap',
    args: [s.tokenIn, s.amountIn, s.tokenOut, s.minOut, s.timestamp, s.verificationData],
    gas: GAS,
  });
}

async function expectSwapRevert(c: Ctx, s: SwapCase, error: string, from?: string): Promise<void> {
  expect(await revertName(sendSwap(c, s, from), c.clients.publicClient)).toBe(error);
}

async function receiptOk(c: Ctx, hash: Hex): Promise<void> {
  const receipt = await c.clients.publicClient.waitForTransactionReceipt({ hash });
  expect(receipt.status).toBe('success');
}

function decodeVerificationData(data: Hex): { fee: bigint; originRate: bigint; user: Address; signature: Hex } {
  const [fee, originRate, user, signature] = decodeAbiParameters(
    [{ type: 'uint256' }, { type: 'uint256' }, { type: 'address' }, { type: 'bytes' }],
    data,
  );
  return { fee, originRate, user, signature };
}

function encodeVerificationData(v: { fee: bigint; originRate: bigint; user: Address; signature: Hex }): Hex {
  return encodeAbiParameters(
    [{ type: 'uint256' }, { type: 'uint256' }, { type: 'address' }, { type: 'bytes' }],
    [v.fee, v.originRate, v.user, v.signature],
  );
}

const flipByte = (hex: Hex, index: number): Hex => {
  const bytes = Buffer.from(hex.slice(2), 'hex');
  bytes[index] = (bytes[index] ?? 0) ^ 0x01;
  return `0x${bytes.toString('hex')}`;
};

beforeAll(async () => {
  // The test user approves the router once for every token of chain 8453.
  const c = ctx(8453);
  const wallet = c.clients.wallet(c.stack.testUser.privateKey);
  for (const token of [c.quote, c.weth, c.wbtc]) {
    await receiptOk(
      c,
      await wallet.writeContract({
        address: token,
        abi: TestTokenArtifact.abi,
        functionName: 'approve',
        args: [c.router, maxUint256],
      }),
    );
  }
});

describe('swap', () => {
  test('behavior: a core-signed swap succeeds as the six-argument call and pays curveOut × (100000 − fee) / 100000', async () => {
    const c = ctx(8453);
    const amountIn = 12_500_000_000_000_000_000n; // 12.5 WETH: crosses the first bid tier
    const fee = 30n;
    const s = signedSwap(c, { tokenIn: c.weth, tokenOut: c.quote, amountIn, fee, timestamp: await latestTimestamp(c) });
    const expected = swapOut(c.curves[c.weth] as RouterCurve, 'bid', amountIn, fee);
    expect(expected).toBe(
      ((10n * 2_998_500_000n + (2_500_000_000n * 2_995_500_000n) / 1_000_000_000n) * (100_000n - fee)) / 100_000n,
    );
    const userIn = await balanceOf(c, c.weth, c.user);
    const userOut = await balanceOf(c, c.quote, c.user);

    const hash = await sendSwap(c, s);
    const receipt = await c.clients.publicClient.waitForTransactionReceipt({ hash });
    expect(receipt.status).toBe('success');
    expect(await balanceOf(c, c.weth, c.user)).toBe(userIn - amountIn);
    expect(await balanceOf(c, c.quote, c.user)).toBe(userOut + expected);
    const [event] = parseEventLogs({ abi: PmmRouterArtifact.abi, eventName: 'Swapped', logs: receipt.logs });
    expect(event?.args).toEqual({
      user: c.user,
      tokenIn: c.weth,
      tokenOut: c.quote,
      amountIn,
      amountOut: expected,
      fee,
      originRate: 123_456_789n,
      quoteTimestamp: s.timestamp,
    });
  });

  test('behavior: the same kind of swap sent as core-encoded raw calldata succeeds (ask side)', async () => {
    const c = ctx(8453);
    const amountIn = 50_000_000_000n; // 50,000 USDC: crosses the first ask tier
    const fee = 100n;
    const s = signedSwap(c, { tokenIn: c.quote, tokenOut: c.weth, amountIn, fee, timestamp: await latestTimestamp(c) });
    const calldata = encodeSwapCalldata({
      tokenIn: s.tokenIn,
      amountIn,
      tokenOut: s.tokenOut,
      minAmountOut: 1n,
      quoteTimestamp: s.timestamp,
      verificationData: s.verificationData,
    });
    // Independent encoder agrees byte for byte.
    expect(calldata).toBe(
      encodeFunctionData({
        abi: PmmRouterArtifact.abi,
        functionName: 'swap',
        args: [s.tokenIn, amountIn, s.tokenOut, 1n, s.timestamp, s.verificationData],
      }),
    );
    const expected = swapOut(c.curves[c.weth] as RouterCurve, 'ask', amountIn, fee);
    const before = await balanceOf(c, c.weth, c.user);
    const hash = await c.clients
      .wallet(c.stack.testUser.privateKey)
      .sendTransaction({ to: c.router, data: calldata as Hex, gas: GAS });
    await receiptOk(c, hash);
    expect(await balanceOf(c, c.weth, c.user)).toBe(before + expected);
  });

  test('behavior: the signature recovers on-chain (ecrecover in the router) to the core signer address', async () => {
    const c = ctx(8453);
    const timestamp = await latestTimestamp(c);
    const signed = signSwapQuote(c.apiSigner, {
      tokenIn: c.weth,
      tokenOut: c.quote,
      timestamp,
      fee: 1n,
      originRate: 7n,
      userAddress: c.user,
    });
    const onChain = await c.clients.publicClient.readContract({
      address: c.router,
      abi: PmmRouterArtifact.abi,
      functionName: 'recoverSwapSigner',
      args: [c.weth, c.quote, timestamp, signed.verificationData as Hex],
    });
    expect(onChain).toBe(c.apiSigner.address);
    expect(onChain).toBe(c.stack.apiSigner.address);
    expect(await recoverAddress({ hash: signed.digest as Hex, signature: signed.signature as Hex })).toBe(onChain);
  });

  test('error: each single tampered field reverts with InvalidSignature', async () => {
    const c = ctx(8453);
    const timestamp = await latestTimestamp(c);
    const good = signedSwap(c, { tokenIn: c.weth, tokenOut: c.quote, amountIn: 10n ** 18n, timestamp });
    const v = decodeVerificationData(good.verificationData);
    const sigByte = (i: number): Hex => encodeVerificationData({ ...v, signature: flipByte(v.signature, i) });
    const tampered: Array<[string, SwapCase]> = [
      ['tokenIn', { ...good, tokenIn: c.wbtc }],
      ['tokenOut', { ...good, tokenOut: c.wbtc }],
      ['timestamp', { ...good, timestamp: timestamp - 1n }],
      ['fee', { ...good, verificationData: encodeVerificationData({ ...v, fee: v.fee + 1n }) }],
      ['originRate', { ...good, verificationData: encodeVerificationData({ ...v, originRate: v.originRate + 1n }) }],
      ['signature r byte', { ...good, verificationData: sigByte(0) }],
      ['signature s byte', { ...good, verificationData: sigByte(40) }],
      ['signature v', { ...good, verificationData: sigByte(64) }],
    ];
    for (const [field, s] of tampered) {
      const name = await revertName(sendSwap(c, s), c.clients.publicClient);
      expect(`${field}: ${name}`).toBe(`${field}: InvalidSignature`);
    }
    // userAddress tampered (and sent from that address, so the sender check passes).
    const other = c.stack.quoter;
    const forOther = { ...good, verificationData: encodeVerificationData({ ...v, user: other.address as Address }) };
    await expectSwapRevert(c, forOther, 'InvalidSignature', other.privateKey);
    // The untampered original still goes through: the reverts were caused by the tampering.
    await receiptOk(c, await sendSwap(c, good));
  });

  test('error: the malleated twin of a valid signature (high s, flipped v) reverts with InvalidSignature', async () => {
    const c = ctx(8453);
    const good = signedSwap(c, {
      tokenIn: c.weth,
      tokenOut: c.quote,
      amountIn: 10n ** 18n,
      timestamp: await latestTimestamp(c),
    });
    const v = decodeVerificationData(good.verificationData);
    const sig = Buffer.from(v.signature.slice(2), 'hex');
    const s = BigInt(`0x${sig.subarray(32, 64).toString('hex')}`);
    const twin = Buffer.concat([
      sig.subarray(0, 32),
      Buffer.from((SECP256K1_N - s).toString(16).padStart(64, '0'), 'hex'),
      Buffer.from([sig[64] === 27 ? 28 : 27]),
    ]);
    // ecrecover alone would accept the twin: it recovers the same signer.
    const twinHex = `0x${twin.toString('hex')}` as Hex;
    const digest = signSwapQuote(c.apiSigner, {
      tokenIn: c.weth,
      tokenOut: c.quote,
      timestamp: good.timestamp,
      fee: v.fee,
      originRate: v.originRate,
      userAddress: c.user,
    }).digest as Hex;
    expect(await recoverAddress({ hash: digest, signature: twinHex })).toBe(c.apiSigner.address);
    await expectSwapRevert(
      c,
      { ...good, verificationData: encodeVerificationData({ ...v, signature: twinHex }) },
      'InvalidSignature',
    );
  });

  test('error: a swap sent by another address than the signed userAddress reverts with WrongSender', async () => {
    const c = ctx(8453);
    const s = signedSwap(c, {
      tokenIn: c.weth,
      tokenOut: c.quote,
      amountIn: 10n ** 18n,
      timestamp: await latestTimestamp(c),
    });
    await expectSwapRevert(c, s, 'WrongSender', c.stack.quoter.privateKey);
  });

  test('error: fee above 10000 reverts with FeeTooHigh; 10000 itself is accepted', async () => {
    const c = ctx(8453);
    const timestamp = await latestTimestamp(c);
    await expectSwapRevert(
      c,
      signedSwap(c, { tokenIn: c.weth, tokenOut: c.quote, amountIn: 10n ** 18n, timestamp, fee: 10_001n }),
      'FeeTooHigh',
    );
    const before = await balanceOf(c, c.quote, c.user);
    await receiptOk(
      c,
      await sendSwap(
        c,
        signedSwap(c, { tokenIn: c.weth, tokenOut: c.quote, amountIn: 10n ** 18n, timestamp, fee: 10_000n }),
      ),
    );
    expect(await balanceOf(c, c.quote, c.user)).toBe(
      before + swapOut(c.curves[c.weth] as RouterCurve, 'bid', 10n ** 18n, 10_000n),
    );
  });

  test('error: output below minOutAmount reverts with InsufficientOutput; exactly minOutAmount is accepted', async () => {
    const c = ctx(8453);
    const timestamp = await latestTimestamp(c);
    const amountIn = 3n * 10n ** 7n; // 0.3 WBTC
    const expected = swapOut(c.curves[c.wbtc] as RouterCurve, 'bid', amountIn, 30n);
    const s = signedSwap(c, { tokenIn: c.wbtc, tokenOut: c.quote, amountIn, timestamp, fee: 30n });
    await expectSwapRevert(c, { ...s, minOut: expected + 1n }, 'InsufficientOutput');
    await receiptOk(c, await sendSwap(c, { ...s, minOut: expected }));
  });

  test('error: a pair without the quote token reverts with PairNotListed, a zero amount with ZeroAmount', async () => {
    const c = ctx(8453);
    const timestamp = await latestTimestamp(c);
    await expectSwapRevert(
      c,
      signedSwap(c, { tokenIn: c.weth, tokenOut: c.wbtc, amountIn: 10n ** 18n, timestamp }),
      'PairNotListed',
    );
    await expectSwapRevert(
      c,
      signedSwap(c, { tokenIn: c.weth, tokenOut: c.quote, amountIn: 0n, timestamp }),
      'ZeroAmount',
    );
  });

  test('error: quoteTimestamp more than 30 s ahead of the block reverts with QuoteFromFuture; exactly 30 s is accepted', async () => {
    const c = ctx(8453);
    const next = (await latestTimestamp(c)) + 5n;
    await rpc(c, 'evm_setNextBlockTimestamp', [Number(next)]);
    await expectSwapRevert(
      c,
      signedSwap(c, { tokenIn: c.weth, tokenOut: c.quote, amountIn: 10n ** 18n, timestamp: next + 31n }),
      'QuoteFromFuture',
    );
    await rpc(c, 'evm_setNextBlockTimestamp', [Number(next + 1n)]);
    await receiptOk(
      c,
      await sendSwap(
        c,
        signedSwap(c, { tokenIn: c.weth, tokenOut: c.quote, amountIn: 10n ** 18n, timestamp: next + 31n }),
      ),
    );
  });

  test('error: a quote older than the validity (60 s) reverts with QuoteExpired; exactly 60 s old is accepted', async () => {
    const c = ctx(8453);
    const timestamp = await latestTimestamp(c);
    const s = signedSwap(c, { tokenIn: c.weth, tokenOut: c.quote, amountIn: 10n ** 18n, timestamp });
    await rpc(c, 'evm_setNextBlockTimestamp', [Number(timestamp + 60n)]);
    await receiptOk(c, await sendSwap(c, s));
    // Time moves past the validity window the way a waiting user would see it.
    await rpc(c, 'evm_increaseTime', [1]);
    await rpc(c, 'evm_mine', []);
    await expectSwapRevert(c, s, 'QuoteExpired');
  });

  test('error: a swap whose output exceeds the router reserve reverts with InsufficientReserve', async () => {
    const c = ctx(8453);
    const reserve = await reserveOf(c, c.weth);
    const curve = c.curves[c.weth] as RouterCurve;
    // Quote needed for the whole remaining reserve plus one more tier step: inside the curve, over the reserve.
    const amountIn = askCostFor(curve, reserve + 10n ** 18n);
    expect(() => quoteOut(curve, 'ask', amountIn, reserve)).toThrow(CurveError);
    await expectSwapRevert(
      c,
      signedSwap(c, { tokenIn: c.quote, tokenOut: c.weth, amountIn, timestamp: await latestTimestamp(c), fee: 0n }),
      'InsufficientReserve',
    );
  });
});

/** The reference result as a string: the amount, or the router error name it predicts. */
function outcomeOf(f: () => bigint): string {
  try {
    return f().toString();
  } catch (err) {
    if (err instanceof CurveError) return err.errorName;
    throw err;
  }
}

/** The quote cost (ceil per full tier, as on-chain) of buying exactly `baseOut` on the ask side. */
function askCostFor(curve: RouterCurve, baseOut: bigint): bigint {
  let left = baseOut;
  let cost = 0n;
  for (const t of curveTiers(curve, 'ask')) {
    const take = left < t.capBase ? left : t.capBase;
    cost += (take * t.priceX18 + 10n ** 18n - 1n) / 10n ** 18n;
    left -= take;
    if (left === 0n) break;
  }
  if (left !== 0n) throw new Error('beyond the curve');
  return cost;
}

describe('quote', () => {
  async function callQuote(
    c: Ctx,
    p: { tokenIn: Address; tokenOut: Address; amountIn: bigint; timestampMs: bigint; signer?: DigestSigner },
  ): Promise<bigint> {
    const sig = signAmmVerification(p.signer ?? c.quoter, {
      chainId: c.stack.chainId,
      verifier: c.stack.contracts.verifier,
      tokenIn: p.tokenIn,
      tokenOut: p.tokenOut,
      timestampInMilisec: p.timestampMs,
    });
    return c.clients.publicClient.readContract({
      address: c.router,
      abi: PmmRouterArtifact.abi,
      functionName: 'quote',
      args: [p.tokenIn, p.amountIn, p.tokenOut, p.timestampMs, sig as Hex],
    });
  }

  test('behavior: the EIP-712 signature core makes recovers on-chain to the quoter, and the digest matches viem', async () => {
    const c = ctx(8453);
    const timestampInMilisec = (await latestTimestamp(c)) * 1000n + 123n;
    const domain = {
      name: 'VerificationImpl',
      version: '1',
      chainId: c.stack.chainId,
      verifyingContract: c.stack.contracts.verifier as Address,
    };
    const types = {
      AmmVerification: [
        { name: 'tokenIn', type: 'address' },
        { name: 'tokenOut', type: 'address' },
        { name: 'timestampInMilisec', type: 'uint256' },
      ],
    } as const;
    const message = { tokenIn: c.weth, tokenOut: c.quote, timestampInMilisec };
    const verifier = { address: c.stack.contracts.verifier as Address, abi: VerificationImplArtifact.abi } as const;
    const onChainDigest = await c.clients.publicClient.readContract({
      ...verifier,
      functionName: 'hashAmmVerification',
      args: [c.weth, c.quote, timestampInMilisec],
    });
    expect(onChainDigest).toBe(hashTypedData({ domain, types, primaryType: 'AmmVerification', message }));
    const sig = signAmmVerification(c.quoter, {
      chainId: c.stack.chainId,
      verifier: c.stack.contracts.verifier,
      tokenIn: c.weth,
      tokenOut: c.quote,
      timestampInMilisec,
    });
    const recovered = await c.clients.publicClient.readContract({
      ...verifier,
      functionName: 'recoverQuoter',
      args: [c.weth, c.quote, timestampInMilisec, sig as Hex],
    });
    expect(recovered).toBe(c.quoter.address);
    expect(recovered).toBe(c.stack.quoter.address);
  });

  test('behavior: accepts a whitelisted signature up to 10 s either side of the block; error: QuoteTimestampOutOfRange beyond', async () => {
    const c = ctx(8453);
    // eth_call at `latest` runs with the latest block's timestamp, so the window edges are exact.
    const nowMs = (await latestTimestamp(c)) * 1000n;
    const base = { tokenIn: c.weth, tokenOut: c.quote, amountIn: 10n ** 18n };
    const expected = quoteOut(c.curves[c.weth] as RouterCurve, 'bid', base.amountIn, await reserveOf(c, c.quote));
    for (const offset of [-10_000n, 0n, 10_000n]) {
      expect(await callQuote(c, { ...base, timestampMs: nowMs + offset })).toBe(expected);
    }
    for (const offset of [-10_001n, 10_001n]) {
      expect(await revertName(callQuote(c, { ...base, timestampMs: nowMs + offset }))).toBe('QuoteTimestampOutOfRange');
    }
  });

  test('error: a signature by a key that is not a whitelisted quoter reverts with NotQuoter', async () => {
    const c = ctx(8453);
    const nowMs = (await latestTimestamp(c)) * 1000n;
    const base = { tokenIn: c.weth, tokenOut: c.quote, amountIn: 10n ** 18n, timestampMs: nowMs };
    expect(await revertName(callQuote(c, { ...base, signer: c.apiSigner }))).toBe('NotQuoter');
    // The test user is whitelisted too (seed plan): the same request signed by it passes.
    expect(await callQuote(c, { ...base, signer: createDigestSigner(c.stack.testUser.privateKey) })).toBeGreaterThan(
      0n,
    );
    // A signature for another chain id (other EIP-712 domain) recovers to some other address.
    const foreign = signAmmVerification(c.quoter, {
      chainId: 56,
      verifier: c.stack.contracts.verifier,
      tokenIn: c.weth,
      tokenOut: c.quote,
      timestampInMilisec: nowMs,
    });
    const name = await revertName(
      c.clients.publicClient.readContract({
        address: c.router,
        abi: PmmRouterArtifact.abi,
        functionName: 'quote',
        args: [c.weth, 10n ** 18n, c.quote, nowMs, foreign as Hex],
      }),
    );
    expect(name).toBe('NotQuoter');
  });

  /** Amounts at, just below and just above every tier boundary of a side, plus 1 and mid-tier. */
  function probeAmounts(curve: RouterCurve, side: CurveSide): bigint[] {
    const amounts = new Set<bigint>([1n]);
    let cumulative = 0n;
    for (const t of curveTiers(curve, side)) {
      const step = side === 'bid' ? t.capBase : (t.capBase * t.priceX18 + 10n ** 18n - 1n) / 10n ** 18n;
      amounts.add(cumulative + step / 3n);
      cumulative += step;
      for (const a of [cumulative - 1n, cumulative, cumulative + 1n]) amounts.add(a);
    }
    amounts.add(cumulative * 2n);
    return [...amounts].filter((a) => a > 0n).sort((a, b) => (a < b ? -1 : 1));
  }

  test.each([8453, 56])(
    'behavior: on chain %i quote() equals reference-curve.ts on both sides at every tier boundary, with DepthExceeded and InsufficientReserve beyond',
    async (chainId) => {
      const c = ctx(chainId);
      const nowMs = (await latestTimestamp(c)) * 1000n;
      const outcomes = new Set<string>();
      let compared = 0;
      for (const base of [c.weth, c.wbtc]) {
        const curve = c.curves[base] as RouterCurve;
        for (const side of ['bid', 'ask'] as const) {
          const [tokenIn, tokenOut] = side === 'bid' ? [base, c.quote] : [c.quote, base];
          const reserve = await reserveOf(c, tokenOut);
          for (const amountIn of probeAmounts(curve, side)) {
            let expected: string;
            try {
              expected = quoteOut(curve, side, amountIn, reserve).toString();
            } catch (err) {
              if (!(err instanceof CurveError)) throw err;
              expected = err.errorName;
            }
            let actual: string;
            try {
              actual = (await callQuote(c, { tokenIn, tokenOut, amountIn, timestampMs: nowMs })).toString();
            } catch (err) {
              actual = await revertName(Promise.reject(err));
            }
            expect(`${side} ${amountIn}: ${actual}`).toBe(`${side} ${amountIn}: ${expected}`);
            outcomes.add(/^\d+$/.test(expected) ? 'value' : expected);
            compared += 1;
          }
        }
      }
      // The probes really reach every outcome: the test cannot pass on values alone.
      expect([...outcomes].sort()).toEqual(['DepthExceeded', 'InsufficientReserve', 'value']);
      expect(compared).toBeGreaterThan(40);
    },
  );

  test('behavior: quote() equals reference-curve.ts on a curve with inexact prices (ceil/floor paths) for random amounts', async () => {
    // The seed curves have prices that divide evenly; this one does not, so every rounding
    // branch (floor per bid tier, ceil of a full ask tier, floor of a partial ask tier) matters.
    const c = ctx(56);
    const deployer = c.clients.wallet(deployerWallet().privateKey);
    const hash = await deployer.deployContract({
      abi: TestTokenArtifact.abi,
      bytecode: TestTokenArtifact.bytecode,
      args: ['Odd', 'ODD', 7],
    });
    const odd = (await c.clients.publicClient.waitForTransactionReceipt({ hash })).contractAddress as Address;
    const curve: RouterCurve = {
      midPriceX18: 123_456_789_012_345_678_901_234_567n,
      askDepths: [3_333_333n, 17_777_777n, 99_999_999n],
      askSpreadsPpm: [333n, 777n, 1999n],
      bidDepths: [4_444_443n, 22_222_221n],
      bidSpreadsPpm: [111n, 2_345n],
    };
    await receiptOk(
      c,
      await deployer.writeContract({
        address: c.router,
        abi: PmmRouterArtifact.abi,
        functionName: 'setCurve',
        args: [
          odd,
          curve.midPriceX18,
          [...curve.askDepths],
          [...curve.askSpreadsPpm],
          [...curve.bidDepths],
          [...curve.bidSpreadsPpm],
        ],
      }),
    );
    await receiptOk(
      c,
      await deployer.writeContract({
        address: odd,
        abi: TestTokenArtifact.abi,
        functionName: 'mint',
        args: [c.router, 60_000_000n],
      }),
    );
    const nowMs = (await latestTimestamp(c)) * 1000n;
    const outcomes = new Set<string>();
    for (const side of ['bid', 'ask'] as const) {
      const [tokenIn, tokenOut] = side === 'bid' ? [odd, c.quote] : [c.quote, odd];
      const reserve = await reserveOf(c, tokenOut);
      const amounts = await fc.sample(fc.bigInt({ min: 1n, max: side === 'bid' ? 25_000_000n : 15n * 10n ** 15n }), {
        numRuns: 40,
        seed: 4663,
      });
      for (const amountIn of [...probeAmounts(curve, side), ...amounts]) {
        const expected = outcomeOf(() => quoteOut(curve, side, amountIn, reserve));
        const actual = await callQuote(c, { tokenIn, tokenOut, amountIn, timestampMs: nowMs }).then(
          String,
          (err: unknown) => revertName(Promise.reject(err)),
        );
        expect(`${side} ${amountIn}: ${actual}`).toBe(`${side} ${amountIn}: ${expected}`);
        outcomes.add(/^\d+$/.test(expected) ? 'value' : expected);
      }
    }
    expect([...outcomes].sort()).toEqual(['DepthExceeded', 'InsufficientReserve', 'value']);
  });

  test('error: quote() of a pair without the quote token reverts PairNotListed, of 0 ZeroAmount', async () => {
    const c = ctx(8453);
    const nowMs = (await latestTimestamp(c)) * 1000n;
    expect(
      await revertName(callQuote(c, { tokenIn: c.weth, tokenOut: c.wbtc, amountIn: 1n, timestampMs: nowMs })),
    ).toBe('PairNotListed');
    expect(
      await revertName(callQuote(c, { tokenIn: c.quote, tokenOut: c.quote, amountIn: 1n, timestampMs: nowMs })),
    ).toBe('PairNotListed');
    expect(
      await revertName(callQuote(c, { tokenIn: c.weth, tokenOut: c.quote, amountIn: 0n, timestampMs: nowMs })),
    ).toBe('ZeroAmount');
  });
});
