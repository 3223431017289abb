/**
 * The router's curves on a devnet chain, read and set with viem the way the router's owner
 * would (tests that move the market by hand: markouts, limits, firm quotes after a move).
 */
import { PmmRouterArtifact, type RouterCurve } from '@pmm/contracts';
import type { Account, Chain, Hex, PublicClient, Transport, WalletClient } from 'viem';

const routerAbi = PmmRouterArtifact.abi;

/** A chain's router as its owner sees it. */
export interface RouterOwner {
  pub: PublicClient;
  owner: WalletClient<Transport, Chain, Account>;
  router: string;
}

/** `base`'s curve, at `blockNumber` or the latest block. */
export async function curveOf(r: Pick<RouterOwner, 'pub' | 'router'>, base: string, blockNumber?: bigint) {
  return (await r.pub.readContract({
    address: r.router as Hex,
    abi: routerAbi,
    functionName: 'getCurve',
    args: [base as Hex],
    blockNumber,
  })) as RouterCurve;
}

/** Sets `base`'s curve (the owner's setCurve); resolves with the block it was mined in. */
export async function setCurve(r: RouterOwner, base: string, curve: RouterCurve): Promise<bigint> {
  const hash = await r.owner.writeContract({
    address: r.router as Hex,
    abi: routerAbi,
    functionName: 'setCurve',
    args: [base as Hex, curve.midPriceX18, curve.askDepths, curve.askSpreadsPpm, curve.bidDepths, curve.bidSpreadsPpm],
  });
  const receipt = await r.pub.waitForTransactionReceipt({ hash });
  if (receipt.status !== 'success') throw new Error(`setCurve ${hash} reverted`);
  return receipt.blockNumber;
}

/** Moves `base`'s mid by `factorPpm` (1_010_000: +1 %), depths and spreads kept; resolves with the block. */
export async function moveCurveMid(r: RouterOwner, base: string, factorPpm: bigint): Promise<bigint> {
  const c = await curveOf(r, base);
  return setCurve(r, base, { ...c, midPriceX18: (c.midPriceX18 * factorPpm) / 1_000_000n });
}
