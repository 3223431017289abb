/**
 * The taker's side of a firm quote on a devnet chain of a running system (startSystem), for the
 * tests that execute what a sign quoted: read the router's curve, approve, wait for the book of a
 * block, sign with `amountIn` through the gateway, send the calldata and see what the user
 * received, and move the market (curve and reference) as the router's owner. Amounts are read
 * back with viem (balances), apart from the code under test.
 */
import type { Account, Chain, Hex, PublicClient, Transport, WalletClient } from 'viem';
import { TestTokenArtifact, type RouterCurve } from '@pmm/contracts';
import { deployerWallet, type ChainStack } from '@pmm/devnet';
import type { OrderbookResponse } from '@pmm/protocol';
import type { System } from '../system/system';
import { until } from '../polling/until';
import { chainClients } from './chain-clients';
import { curveOf, setCurve, type RouterOwner } from './router-curve';

const erc20Abi = TestTokenArtifact.abi;

/** One chain as the taker and the router's owner see it. */
export interface SwapChain {
  sys: System;
  c: ChainStack;
  pub: PublicClient;
  user: WalletClient<Transport, Chain, Account>;
  owner: WalletClient<Transport, Chain, Account>;
}

export function swapChain(sys: System, chainId: number): SwapChain {
  const c = sys.chain(chainId);
  const cl = chainClients(c);
  return {
    sys,
    c,
    pub: cl.publicClient,
    user: cl.wallet(c.testUser.privateKey),
    owner: cl.wallet(deployerWallet().privateKey),
  };
}

/** The router's curve for `base`, at the latest block. */
export const curveOn = (x: SwapChain, base: string): Promise<RouterCurve> => curveOf(routerOwner(x), base);

/** The test user's balance of `token`. */
export const takerBalance = (x: SwapChain, token: string) =>
  x.pub.readContract({
    address: token as Hex,
    abi: erc20Abi,
    functionName: 'balanceOf',
    args: [x.c.testUser.address as Hex],
  }) as Promise<bigint>;

/** Approves `amount` of `token` to the router; resolves with the block it was mined in. */
export async function approveRouter(x: SwapChain, token: string, amount: bigint): Promise<number> {
  const hash = await x.user.writeContract({
    address: token as Hex,
    abi: erc20Abi,
    functionName: 'approve',
    args: [x.c.contracts.router as Hex, amount],
  });
  return Number((await x.pub.waitForTransactionReceipt({ hash })).blockNumber);
}

/** `/v2/price` once its book is of block `block` or later. */
export function bookAt(x: SwapChain, block: number): Promise<OrderbookResponse> {
  return until(
    async () => {
      const res = await fetch(`${x.sys.gateway.url}/v2/price?chainId=${x.c.chainId}`, {
        headers: { 'X-API-KEY': x.sys.gateway.apiKey },
      });
      if (res.status !== 200) return false;
      const book = (await res.json()) as OrderbookResponse;
      return book.blockNumber >= block && book;
    },
    30_000,
    `chain ${x.c.chainId}: a book at block >= ${block}`,
    50,
  );
}

/** What a firm sign answered (the fields these tests read). */
export interface FirmSign {
  calldata: Hex;
  amountOut: string;
  minAmountOut: string;
  blockNumber: number;
}

/** A sign with `amountIn` through the gateway (the development key, the test user). */
export async function signFirm(
  x: SwapChain,
  tokenIn: string,
  tokenOut: string,
  amountIn: bigint,
  fee: bigint,
  extra: object = {},
): Promise<FirmSign> {
  const res = await fetch(`${x.sys.gateway.url}/v2/swap/sign`, {
    method: 'POST',
    headers: { 'X-API-KEY': x.sys.gateway.apiKey, 'Content-Type': 'application/json' },
    body: JSON.stringify({
      chainId: x.c.chainId,
      tokenIn,
      tokenOut,
      fee: String(fee),
      userAddress: x.c.testUser.address,
      amountIn: amountIn.toString(),
      ...extra,
    }),
  });
  const body: unknown = await res.json();
  if (res.status !== 200) throw new Error(`sign: ${res.status} ${JSON.stringify(body)}`);
  return body as FirmSign;
}

/** Sends the calldata; resolves with the receipt's block and what the user received of `tokenOut`. */
export async function sendSwap(
  x: SwapChain,
  calldata: Hex,
  tokenOut: string,
): Promise<{ block: number; received: bigint; hash: Hex }> {
  const before = await takerBalance(x, tokenOut);
  const hash = await x.user.sendTransaction({ to: x.c.contracts.router as Hex, data: calldata });
  const receipt = await x.pub.waitForTransactionReceipt({ hash });
  if (receipt.status !== 'success') throw new Error(`swap ${hash} reverted`);
  return { block: Number(receipt.blockNumber), received: (await takerBalance(x, tokenOut)) - before, hash };
}

/**
 * Sets the base's curve to `moved` and its reference with it (the market moved), as the router's
 * owner; resolves once the pair is served again: the two land in separate blocks, and in between
 * the curve is off its reference, so the pair is withheld until its recovery blocks have passed.
 */
export async function moveMarket(x: SwapChain, base: string, moved: RouterCurve): Promise<void> {
  const block = Number(await setCurve(routerOwner(x), base, moved));
  const served = (book: OrderbookResponse) => book.pairs.some((p) => p.baseToken.toLowerCase() === base.toLowerCase());
  await until(
    async () => {
      // On automine no block comes by itself: one is mined per look, for the recovery blocks to pass.
      await x.pub.request({ method: 'evm_mine' } as never);
      return served(await bookAt(x, block));
    },
    30_000,
    `chain ${x.c.chainId}: ${base} served again`,
    100,
  );
}

/** The router's owner; a curve it moves takes the pair's reference with it (the market moved). */
const routerOwner = (x: SwapChain): RouterOwner => ({
  pub: x.pub,
  owner: x.owner,
  router: x.c.contracts.router,
  chain: x.c,
});
