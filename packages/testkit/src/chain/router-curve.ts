/**
 * The router's curves on a devnet chain, read and set with viem the way the router's owner
 * would (tests that move the market by hand: markouts, limits, firm quotes after a move).
 */
import { MockV3AggregatorArtifact, PmmRouterArtifact, type RouterCurve } from '@pmm/contracts';
import { REFERENCE_FEED_DECIMALS, type ChainStack } from '@pmm/devnet';
import { feedAnswerFromMidX18 } from '@pmm/protocol';
import type { Account, Chain, Hex, PublicClient, Transport, WalletClient } from 'viem';

const routerAbi = PmmRouterArtifact.abi;

/**
 * The feed's update carries its own gas limit, not the node's estimate. The mock stores
 * `block.timestamp`, and anvil mines several blocks in one second: an estimate taken in the second
 * of the last update (the store changes nothing, 2,800 gas less) ran out of gas when the update
 * was mined in the next one. Measured: 100,603 gas in the same second, 103,403 in a new one.
 */
const FEED_UPDATE_GAS = 200_000n;

/** A chain's router as its owner sees it. */
export interface RouterOwner {
  pub: PublicClient;
  owner: WalletClient<Transport, Chain, Account>;
  router: string;
  /**
   * The chain, when the pair's reference feed moves with the curve (the market moved, not the
   * curve alone): a curve moved by hand past its band without it is withheld, its signs refused.
   */
  chain?: Pick<ChainStack, 'references' | 'baseTokens' | 'quoteToken'>;
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

/** Sets `base`'s curve (the owner's setCurve), and its reference with `r.chain`; resolves with the block the last was mined in. */
export async function setCurve(r: RouterOwner, base: string, curve: RouterCurve): Promise<bigint> {
  const hash = await r.owner.writeContract({
    address: r.router as Hex,
    abi: routerAbi,
    functionName: 'setCurve',
    args: [base as Hex, curve.midPriceX18, curve.askDepths, curve.askSpreadsPpm, curve.bidDepths, curve.bidSpreadsPpm],
  });
  const receipt = await r.pub.waitForTransactionReceipt({ hash });
  if (receipt.status !== 'success') throw new Error(`setCurve ${hash} reverted`);
  if (!r.chain) return receipt.blockNumber;
  return (await setReference(r, r.chain, base, curve.midPriceX18)) ?? receipt.blockNumber;
}

/**
 * Publishes `midX18` as `base`'s reference: its devnet feed answers that price (as the owner; the
 * mock lets anyone). Resolves with the block it was mined in (undefined: the pair has no feed).
 */
export async function setReference(
  r: Pick<RouterOwner, 'pub' | 'owner'>,
  chain: NonNullable<RouterOwner['chain']>,
  base: string,
  midX18: bigint,
): Promise<bigint | undefined> {
  const feed = chain.references[base]?.feed;
  const token = chain.baseTokens.find((t) => t.address.toLowerCase() === base.toLowerCase());
  if (!feed || !token) return undefined;
  const answer = feedAnswerFromMidX18(midX18, {
    feedDecimals: REFERENCE_FEED_DECIMALS,
    baseDecimals: token.decimals,
    quoteDecimals: chain.quoteToken.decimals,
  });
  const hash = await r.owner.writeContract({
    address: feed as Hex,
    abi: MockV3AggregatorArtifact.abi,
    functionName: 'updateAnswer',
    args: [answer],
    gas: FEED_UPDATE_GAS,
  });
  const receipt = await r.pub.waitForTransactionReceipt({ hash });
  if (receipt.status !== 'success') throw new Error(`updateAnswer ${hash} reverted`);
  return receipt.blockNumber;
}

/** Moves `base`'s mid by `factorPpm` (1_010_000: +1 %), depths and spreads kept; resolves with the block. */
export async function moveCurveMid(r: RouterOwner, base: string, factorPpm: bigint): Promise<bigint> {
  const c = await curveOf(r, base);
  return setCurve(r, base, { ...c, midPriceX18: (c.midPriceX18 * factorPpm) / 1_000_000n });
}
