/**
 * The devnet's "true market": each pair's mid takes one step of a seeded random walk every block.
 * The walk is geometric: each step multiplies the mid by (1 + σ·z), z a standard normal draw
 * clipped to ±4 (the mid stays positive), σ the volatility per block. The same seed gives the same
 * sequence of mids (`midWalk`), so a test or a demo can be replayed; which block each step lands in
 * depends on timing. What follows the walk on chain (the maker's curve, the reference feed):
 * devnet-market.ts.
 */
import { uniformFloat64 } from 'pure-rand/distribution/uniformFloat64';
import { xoroshiro128plus } from 'pure-rand/generator/xoroshiro128plus';

/**
 * When a reference feed publishes the market, as Chainlink's feeds do: once the market has moved
 * `deviationBps` from the last answer, or `heartbeatSeconds` after it, whichever comes first.
 */
export interface FeedPublication {
  /** Deviation threshold, in basis points (> 0). */
  deviationBps: number;
  /** Heartbeat, in seconds (> 0). */
  heartbeatSeconds: number;
}

/** The market's settings (off when the devnet gets none). */
export interface MovingMarketOptions {
  /** Standard deviation of one block's relative mid move, in basis points (> 0, ≤ 1000). */
  volatilityBps: number;
  /** Seed of the walk (an integer): the same seed, the same mids. */
  seed: number;
  /** The reference feeds' publication rules; default DEFAULT_FEED_PUBLICATION. */
  feed?: FeedPublication;
}

/**
 * The devnet feeds' rules: a threshold of 0.15 %, of the order of real ETH/USD feeds', and a
 * heartbeat of a minute (real feeds' are tens of minutes to a day: a stopped devnet feed shows sooner).
 */
export const DEFAULT_FEED_PUBLICATION: Readonly<FeedPublication> = Object.freeze({
  deviationBps: 15,
  heartbeatSeconds: 60,
});

/** `npm start`'s market: 5 bps per block, about 0.1 % per minute on a 2 s chain. */
export const DEFAULT_MARKET: Readonly<MovingMarketOptions> = Object.freeze({ volatilityBps: 5, seed: 1 });

const SCALE = 1_000_000_000n;
const CLIP = 4;

export function assertMarketOptions(o: MovingMarketOptions): void {
  if (!(Number.isFinite(o.volatilityBps) && o.volatilityBps > 0 && o.volatilityBps <= 1000))
    throw new Error(`market volatility must be in (0, 1000] bps, got ${o.volatilityBps}`);
  if (!Number.isSafeInteger(o.seed)) throw new Error(`market seed must be an integer, got ${o.seed}`);
  const feed = o.feed ?? DEFAULT_FEED_PUBLICATION;
  if (!(Number.isFinite(feed.deviationBps) && feed.deviationBps > 0))
    throw new Error(`feed deviation threshold must be > 0 bps, got ${feed.deviationBps}`);
  if (!(Number.isSafeInteger(feed.heartbeatSeconds) && feed.heartbeatSeconds > 0))
    throw new Error(`feed heartbeat must be a whole number of seconds > 0, got ${feed.heartbeatSeconds}`);
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

/**
 * Whether a feed whose last answer is `last` (published at `last.at`, Unix seconds) publishes
 * `answer` at `now`: its deviation threshold reached, or its heartbeat due.
 */
export function feedPublishes(
  last: { answer: bigint; at: number },
  answer: bigint,
  now: number,
  rules: FeedPublication,
): boolean {
  if (now - last.at >= rules.heartbeatSeconds) return true;
  if (last.answer <= 0n) return answer !== last.answer;
  const moved = answer > last.answer ? answer - last.answer : last.answer - answer;
  // moved / last ≥ bps / 10⁴, in integers (bps may have a fraction: scaled by 100).
  return moved * 1_000_000n >= last.answer * BigInt(Math.round(rules.deviationBps * 100));
}

/**
 * The market settings of an environment (`pnpm devnet`, `npm start`): DEVNET_MARKET `on`/`off`
 * (default on), DEVNET_MARKET_VOLATILITY_BPS, DEVNET_MARKET_SEED, DEVNET_FEED_DEVIATION_BPS and
 * DEVNET_FEED_HEARTBEAT_SECONDS over `defaults`. Undefined when off; throws naming the bad setting.
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
  const feed = defaults.feed ?? DEFAULT_FEED_PUBLICATION;
  const options = {
    volatilityBps: number('DEVNET_MARKET_VOLATILITY_BPS', defaults.volatilityBps),
    seed: number('DEVNET_MARKET_SEED', defaults.seed),
    feed: {
      deviationBps: number('DEVNET_FEED_DEVIATION_BPS', feed.deviationBps),
      heartbeatSeconds: number('DEVNET_FEED_HEARTBEAT_SECONDS', feed.heartbeatSeconds),
    },
  };
  assertMarketOptions(options);
  return options;
}
