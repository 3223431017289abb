/**
 * A market that moves on the devnet: on every new block, each listed pair's curve mid takes one
 * step of a seeded random walk (the router owner's `setCurve`, the deployer's), as a real maker's
 * pricing would, so that books, the console and markouts move. The walk is geometric: each step
 * multiplies the mid by (1 + σ·z), z a standard normal draw clipped to ±4 (the mid stays positive),
 * σ the volatility per block. Only the mid moves; depths and spreads keep the seed plan's.
 *
 * The same seed gives the same sequence of mids (`midWalk`), so a test or a demo can be replayed;
 * which block each step lands in depends on timing. Needs interval mining: on automine every
 * setCurve would mine a block of its own and the walk would feed itself.
 */
import { uniformFloat64 } from 'pure-rand/distribution/uniformFloat64';
import { xoroshiro128plus } from 'pure-rand/generator/xoroshiro128plus';
import { PmmRouterArtifact, type RouterCurve } from '@pmm/contracts';
import { Interface, JsonRpcProvider, type HDNodeWallet } from 'ethers';

/** The moving market's settings (off when the devnet gets none). */
export interface MovingMarketOptions {
  /** Standard deviation of one block's relative mid move, in basis points (> 0, ≤ 1000). */
  volatilityBps: number;
  /** Seed of the walk (an integer): the same seed, the same mids. */
  seed: number;
}

/** `npm start`'s market: 5 bps per block, about 0.1 % per minute on a 2 s chain. */
export const DEFAULT_MARKET: Readonly<MovingMarketOptions> = Object.freeze({ volatilityBps: 5, seed: 1 });

const router = new Interface(PmmRouterArtifact.abi);
const SCALE = 1_000_000_000n;
const CLIP = 4;
const CALL_GAS = 300_000n;
const MAX_FEE_PER_GAS = 50_000_000_000n;
const MAX_PRIORITY_FEE_PER_GAS = 1_000_000_000n;

export function assertMarketOptions(o: MovingMarketOptions): void {
  if (!(Number.isFinite(o.volatilityBps) && o.volatilityBps > 0 && o.volatilityBps <= 1000))
    throw new Error(`market volatility must be in (0, 1000] bps, got ${o.volatilityBps}`);
  if (!Number.isSafeInteger(o.seed)) throw new Error(`market seed must be an integer, got ${o.seed}`);
}

/**
 * The walk of one pair's mid (quote raw per base raw × 1e18): an endless sequence of mids, each
 * one step after the previous, starting after `startMidX18`. `stream` tells pairs apart (each
 * pair of a chain walks on its own, reproducibly).
 */
export function* midWalk(startMidX18: bigint, options: MovingMarketOptions, stream: number): Generator<bigint> {
  assertMarketOptions(options);
  // One generator per pair: the seed mixed with the pair's index (a large odd multiplier).
  const rng = xoroshiro128plus((options.seed ^ Math.imul(stream + 1, 0x9e3779b1)) | 0);
  const sigma = options.volatilityBps / 10_000;
  let mid = startMidX18;
  for (;;) {
    // Box–Muller: two uniforms, one normal draw (1 − u keeps the logarithm finite).
    const u1 = 1 - uniformFloat64(rng);
    const u2 = uniformFloat64(rng);
    const z = Math.max(-CLIP, Math.min(CLIP, Math.sqrt(-2 * Math.log(u1)) * Math.cos(2 * Math.PI * u2)));
    const factor = SCALE + BigInt(Math.round(sigma * z * Number(SCALE)));
    mid = (mid * factor) / SCALE;
    if (mid <= 0n) mid = 1n;
    yield mid;
  }
}

export interface MovingMarketChain {
  chainId: number;
  rpcUrl: string;
  router: string;
  /** Listed pairs: base token address and its seeded curve. */
  pairs: readonly { base: string; curve: RouterCurve }[];
  /** Interval mining period (ms, > 0); the node is polled for new blocks at a quarter of it. */
  blockIntervalMs: number;
  /** The router's owner. */
  owner: HDNodeWallet;
}

export interface MovingMarket {
  /** Steps sent so far (one per block seen). */
  readonly steps: () => number;
  /** Stops moving; the last mids stay on the chain. */
  stop(): Promise<void>;
}

/** Starts the walk on one chain (its setup transactions already mined). */
export async function startMovingMarket(chain: MovingMarketChain, options: MovingMarketOptions): Promise<MovingMarket> {
  assertMarketOptions(options);
  if (!(chain.blockIntervalMs > 0)) throw new Error(`chain ${chain.chainId}: a moving market needs interval mining`);
  const provider = new JsonRpcProvider(chain.rpcUrl, chain.chainId, { staticNetwork: true, batchMaxCount: 1 });
  const walks = chain.pairs.map((p, i) => ({ ...p, walk: midWalk(p.curve.midPriceX18, options, i) }));
  let nonce = await provider.getTransactionCount(chain.owner.address, 'pending');
  let lastBlock = await provider.getBlockNumber();
  let steps = 0;
  let busy: Promise<void> | undefined;
  let stopped = false;

  const step = async (): Promise<void> => {
    const head = await provider.getBlockNumber();
    if (head <= lastBlock || stopped) return;
    lastBlock = head;
    steps += 1;
    for (const p of walks) {
      const mid = p.walk.next().value as bigint;
      const c = p.curve;
      const signed = await chain.owner.signTransaction({
        to: chain.router,
        data: router.encodeFunctionData('setCurve', [
          p.base,
          mid,
          c.askDepths,
          c.askSpreadsPpm,
          c.bidDepths,
          c.bidSpreadsPpm,
        ]),
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
  return {
    steps: () => steps,
    async stop() {
      stopped = true;
      clearInterval(timer);
      await busy;
      provider.destroy();
    },
  };
}

/**
 * The market settings of an environment (`pnpm devnet`, `npm start`): DEVNET_MARKET `on`/`off`
 * (default on), DEVNET_MARKET_VOLATILITY_BPS and DEVNET_MARKET_SEED over `defaults`. Undefined
 * when off; throws naming the bad setting.
 */
export function marketFromEnv(
  env: Readonly<Record<string, string | undefined>>,
  defaults: Readonly<MovingMarketOptions>,
): MovingMarketOptions | undefined {
  const on = env.DEVNET_MARKET || 'on';
  if (on !== 'on' && on !== 'off') throw new Error(`DEVNET_MARKET must be on or off, got "${on}"`);
  if (on === 'off') return undefined;
  const number = (name: string, fallback: number): number => {
    const raw = env[name];
    if (raw === undefined || raw === '') return fallback;
    if (!/^-?\d+(\.\d+)?$/.test(raw)) throw new Error(`${name} must be a number, got "${raw}"`);
    return Number(raw);
  };
  const options = {
    volatilityBps: number('DEVNET_MARKET_VOLATILITY_BPS', defaults.volatilityBps),
    seed: number('DEVNET_MARKET_SEED', defaults.seed),
  };
  assertMarketOptions(options);
  return options;
}
