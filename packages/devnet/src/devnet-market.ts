/**
 * The devnet's market, on chain, every block:
 * - the true market (market-walk.ts) takes one step for each pair;
 * - the maker's pricing engine sets the pair's curve mid to it (the router owner's `setCurve`, the
 *   deployer's), as a real maker's pricing would; only the mid moves, depths and spreads keep the
 *   seed plan's;
 * - the pair's reference feed (@chainlink/contracts' MockV3Aggregator) publishes it under real
 *   publication rules: a deviation threshold and a heartbeat (`feedPublishes`).
 *
 * Faults for drills (`MarketControls`): stop one pair's engine (its curve freezes while the market
 * walks), skew one pair's curve by N bps or by a factor such as 10¹² (the decimals class of error),
 * stop one pair's feed.
 *
 * Needs interval mining: on automine every transaction would mine a block of its own and the
 * walk would feed itself.
 */
import { MockV3AggregatorArtifact, PmmRouterArtifact, type RouterCurve } from '@pmm/contracts';
import { feedAnswerFromMidX18, type ReferenceScale } from '@pmm/protocol';
import { Interface, JsonRpcProvider, type HDNodeWallet } from 'ethers';
import {
  assertMarketOptions,
  DEFAULT_FEED_PUBLICATION,
  feedPublishes,
  midWalk,
  type MovingMarketOptions,
} from './market-walk';

const router = new Interface(PmmRouterArtifact.abi);
const aggregator = new Interface(MockV3AggregatorArtifact.abi);
const CALL_GAS = 300_000n;
const MAX_FEE_PER_GAS = 50_000_000_000n;
const MAX_PRIORITY_FEE_PER_GAS = 1_000_000_000n;

/** How a drill bends one pair's curve away from the market (the engine applies it to every mid it sends). */
export type CurveSkew = { bps: number } | { times: bigint } | { dividedBy: bigint };

export interface MarketPair {
  base: string;
  /** The seeded curve (its mid is where the walk starts). */
  curve: RouterCurve;
  /** The pair's reference feed. */
  feed: string;
  /** The feed's answer at deployment, and how its answer relates to the curve's mid. */
  feedAnswer: bigint;
  scale: ReferenceScale;
}

export interface MovingMarketChain {
  chainId: number;
  rpcUrl: string;
  router: string;
  pairs: readonly MarketPair[];
  /** Interval mining period (ms, > 0); the node is polled for new blocks at a quarter of it. */
  blockIntervalMs: number;
  /** The router's owner (also sends the feeds' answers). */
  owner: HDNodeWallet;
}

/** One pair as the market last moved it. */
export interface MarketPairState {
  /** The true market's mid (quote raw per base raw × 1e18). */
  marketMidX18: bigint;
  /** The last curve mid the engine sent. */
  curveMidX18: bigint;
  /** The feed's last answer sent, and the block time it was sent at. */
  feedAnswer: bigint;
  feedAt: number;
  engine: 'running' | 'stopped';
  feed: 'running' | 'stopped';
  skew: CurveSkew | undefined;
}

/** The faults a drill sets on one pair (by base token address); each takes effect from the next block. */
export interface MarketControls {
  /** The engine stops sending this pair's curve: it stays where it is while the market walks. */
  stopEngine(base: string): void;
  startEngine(base: string): void;
  /** Every curve mid the engine sends for this pair is the market's, skewed (undefined: none). */
  skewCurve(base: string, skew: CurveSkew | undefined): void;
  /** The feed publishes nothing more for this pair (its answer ages). */
  stopFeed(base: string): void;
  startFeed(base: string): void;
  state(base: string): MarketPairState;
}

export interface MovingMarket extends MarketControls {
  /** Steps taken so far (one per block seen). */
  readonly steps: () => number;
  /** Stops moving; the last curves and answers stay on the chain. */
  stop(): Promise<void>;
}

/** The curve mid the engine sends for a market mid. */
export function skewedMid(marketMidX18: bigint, skew: CurveSkew | undefined): bigint {
  if (!skew) return marketMidX18;
  if ('bps' in skew) {
    if (!Number.isSafeInteger(skew.bps) || skew.bps <= -10_000)
      throw new Error(`skew must be > -10000 bps, got ${skew.bps}`);
    return (marketMidX18 * BigInt(10_000 + skew.bps)) / 10_000n;
  }
  const factor = 'times' in skew ? skew.times : skew.dividedBy;
  if (factor <= 0n) throw new Error('a skew factor must be > 0');
  const mid = 'times' in skew ? marketMidX18 * factor : marketMidX18 / factor;
  return mid > 0n ? mid : 1n;
}

interface PairSlot {
  pair: MarketPair;
  walk: Generator<bigint>;
  state: MarketPairState;
}

/** Starts the market on one chain (its setup transactions already mined). */
export async function startMovingMarket(chain: MovingMarketChain, options: MovingMarketOptions): Promise<MovingMarket> {
  assertMarketOptions(options);
  if (!(chain.blockIntervalMs > 0)) throw new Error(`chain ${chain.chainId}: a moving market needs interval mining`);
  const rules = options.feed ?? DEFAULT_FEED_PUBLICATION;
  const provider = new JsonRpcProvider(chain.rpcUrl, chain.chainId, { staticNetwork: true, batchMaxCount: 1 });
  const deployedAt = (await provider.getBlock('latest'))?.timestamp ?? 0;
  const slots = new Map<string, PairSlot>(
    chain.pairs.map((p, i) => [
      p.base.toLowerCase(),
      {
        pair: p,
        walk: midWalk(p.curve.midPriceX18, options, i),
        state: {
          marketMidX18: p.curve.midPriceX18,
          curveMidX18: p.curve.midPriceX18,
          feedAnswer: p.feedAnswer,
          feedAt: deployedAt,
          engine: 'running',
          feed: 'running',
          skew: undefined,
        },
      },
    ]),
  );
  let nonce = await provider.getTransactionCount(chain.owner.address, 'pending');
  let lastBlock = await provider.getBlockNumber();
  let steps = 0;
  let busy: Promise<void> | undefined;
  let stopped = false;

  const send = async (to: string, data: string): Promise<void> => {
    const signed = await chain.owner.signTransaction({
      to,
      data,
      nonce,
      gasLimit: CALL_GAS,
      type: 2,
      chainId: chain.chainId,
      maxFeePerGas: MAX_FEE_PER_GAS,
      maxPriorityFeePerGas: MAX_PRIORITY_FEE_PER_GAS,
    });
    try {
      await provider.send('eth_sendRawTransaction', [signed]);
      nonce += 1;
    } catch {
      // Another sender used the owner's nonce (a test moving a curve by hand): count again.
      nonce = await provider.getTransactionCount(chain.owner.address, 'pending');
    }
  };

  const step = async (): Promise<void> => {
    const head = await provider.getBlock('latest');
    if (!head || head.number <= lastBlock || stopped) return;
    lastBlock = head.number;
    steps += 1;
    for (const { pair, walk, state } of slots.values()) {
      state.marketMidX18 = walk.next().value as bigint;
      if (state.engine === 'running') {
        const c = pair.curve;
        const mid = skewedMid(state.marketMidX18, state.skew);
        await send(
          chain.router,
          router.encodeFunctionData('setCurve', [
            pair.base,
            mid,
            c.askDepths,
            c.askSpreadsPpm,
            c.bidDepths,
            c.bidSpreadsPpm,
          ]),
        );
        state.curveMidX18 = mid;
      }
      const answer = feedAnswerFromMidX18(state.marketMidX18, pair.scale);
      if (
        state.feed === 'running' &&
        feedPublishes({ answer: state.feedAnswer, at: state.feedAt }, answer, head.timestamp, rules)
      ) {
        await send(pair.feed, aggregator.encodeFunctionData('updateAnswer', [answer]));
        state.feedAnswer = answer;
        state.feedAt = head.timestamp;
      }
    }
  };
  const timer = setInterval(
    () => {
      // One step at a time; a node that is slow to answer skips blocks rather than queueing steps.
      busy ??= step()
        .catch(() => undefined) // a stopped or restarting node: the next tick tries again
        .finally(() => (busy = undefined));
    },
    Math.max(25, Math.floor(chain.blockIntervalMs / 4)),
  );
  timer.unref();

  const slot = (base: string): PairSlot => {
    const found = slots.get(base.toLowerCase());
    if (!found) throw new Error(`chain ${chain.chainId}: no market for ${base}`);
    return found;
  };
  return {
    steps: () => steps,
    stopEngine: (base) => void (slot(base).state.engine = 'stopped'),
    startEngine: (base) => void (slot(base).state.engine = 'running'),
    skewCurve(base, skew) {
      if (skew) skewedMid(1n, skew); // a bad skew throws here, not in the loop
      slot(base).state.skew = skew;
    },
    stopFeed: (base) => void (slot(base).state.feed = 'stopped'),
    startFeed: (base) => void (slot(base).state.feed = 'running'),
    state: (base) => ({ ...slot(base).state }),
    async stop() {
      stopped = true;
      clearInterval(timer);
      await busy;
      provider.destroy();
    },
  };
}
