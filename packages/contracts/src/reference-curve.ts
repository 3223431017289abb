/**
 * A pure bigint replica of PmmRouter's pricing, with exactly the same rounding and the same
 * errors, so that tests (and the devnet's seed plan) can predict every quote and the orderbook.
 *
 * Model, per listed base token: `midPriceX18` = quote raw units per base raw unit × 1e18, and per
 * side cumulative depths in BASE raw units with a spread in ppm per tier. The marginal price is
 * constant inside a tier:
 *   askPriceX18(i) = floor(mid × (1e6 + askSpread[i]) / 1e6)
 *   bidPriceX18(i) = floor(mid × (1e6 − bidSpread[i]) / 1e6)
 * INVARIANT: any change here must be mirrored in contracts/PmmRouter.sol (and vice versa); the
 * devnet's on-chain tests compare the two.
 */
// The router's fee denominator (a fee of 1 is 0.1 bps) is the protocol's.
import { netOfFee } from '@pmm/protocol';

const PPM = 1_000_000n;
const X18 = 10n ** 18n;

/** One base token's curve, in the same shape as PmmRouter.setCurve's arguments. */
export interface RouterCurve {
  /** Quote raw units per base raw unit, times 1e18. */
  midPriceX18: bigint;
  /** Cumulative depths in base raw units, strictly increasing. */
  askDepths: readonly bigint[];
  askSpreadsPpm: readonly bigint[];
  bidDepths: readonly bigint[];
  /** Each below 1e6 (100%). */
  bidSpreadsPpm: readonly bigint[];
}

/** `bid`: the market maker buys base (base in, quote out). `ask`: it sells base (quote in, base out). */
export type CurveSide = 'bid' | 'ask';

/** The router's custom error names that pricing alone can produce. */
export type CurveErrorName = 'ZeroAmount' | 'DepthExceeded' | 'InsufficientReserve' | 'InvalidCurve';

/** Thrown where the router would revert; `name` is the router's custom error name. */
export class CurveError extends Error {
  constructor(
    readonly errorName: CurveErrorName,
    message: string,
  ) {
    super(`${errorName}: ${message}`);
    this.name = 'CurveError';
  }
}

/** One constant-price tier of one side. */
export interface CurveTier {
  /** Cumulative base depth at the start of the tier (raw units). */
  fromBase: bigint;
  /** Base capacity of the tier (raw units). */
  capBase: bigint;
  spreadPpm: bigint;
  /** Marginal price of the tier: quote raw per base raw × 1e18, floored as on-chain. */
  priceX18: bigint;
}

/** The ask price of a tier, floored as on-chain. */
export function askPriceX18(midPriceX18: bigint, spreadPpm: bigint): bigint {
  return (midPriceX18 * (PPM + spreadPpm)) / PPM;
}

/** The bid price of a tier, floored as on-chain. */
export function bidPriceX18(midPriceX18: bigint, spreadPpm: bigint): bigint {
  return (midPriceX18 * (PPM - spreadPpm)) / PPM;
}

/**
 * Validates a curve with the router's `setCurve` rules (mid > 0, equal lengths, strictly
 * increasing depths, bid spreads below 1e6). Throws CurveError('InvalidCurve').
 */
export function assertValidCurve(curve: RouterCurve): void {
  if (curve.midPriceX18 <= 0n) throw new CurveError('InvalidCurve', 'midPriceX18 must be positive');
  const check = (depths: readonly bigint[], spreads: readonly bigint[], side: CurveSide): void => {
    if (depths.length !== spreads.length) throw new CurveError('InvalidCurve', `${side} lengths differ`);
    let previous = 0n;
    depths.forEach((depth, i) => {
      if (depth <= previous) throw new CurveError('InvalidCurve', `${side} depths must increase`);
      const spread = spreads[i] ?? 0n;
      if (spread < 0n || (side === 'bid' && spread >= PPM)) {
        throw new CurveError('InvalidCurve', `${side} spread out of range`);
      }
      previous = depth;
    });
  };
  check(curve.askDepths, curve.askSpreadsPpm, 'ask');
  check(curve.bidDepths, curve.bidSpreadsPpm, 'bid');
}

/** The tiers of one side, best price first (asks ascending, bids descending). */
export function curveTiers(curve: RouterCurve, side: CurveSide): CurveTier[] {
  const depths = side === 'ask' ? curve.askDepths : curve.bidDepths;
  const spreads = side === 'ask' ? curve.askSpreadsPpm : curve.bidSpreadsPpm;
  const price = side === 'ask' ? askPriceX18 : bidPriceX18;
  let previous = 0n;
  return depths.map((depth, i) => {
    const spreadPpm = spreads[i] ?? 0n;
    const tier = {
      fromBase: previous,
      capBase: depth - previous,
      spreadPpm,
      priceX18: price(curve.midPriceX18, spreadPpm),
    };
    previous = depth;
    return tier;
  });
}

/**
 * The gross output of the curve (no fee), exactly as PmmRouter computes it.
 * - bid: base in; per tier take = min(rem, cap), out += floor(take × bidPrice / 1e18).
 * - ask: quote in; a full tier costs ceil(cap × askPrice / 1e18) quote and gives cap base; a
 *   partial tier gives floor(rem × 1e18 / askPrice) base.
 * Throws CurveError('ZeroAmount') for 0 and CurveError('DepthExceeded') past the last tier.
 */
export function curveOut(curve: RouterCurve, side: CurveSide, amountIn: bigint): bigint {
  if (amountIn === 0n) throw new CurveError('ZeroAmount', 'amountIn is 0');
  if (amountIn < 0n) throw new RangeError('amountIn must not be negative');
  let remaining = amountIn;
  let out = 0n;
  for (const tier of curveTiers(curve, side)) {
    if (remaining === 0n) break;
    if (side === 'bid') {
      const take = remaining < tier.capBase ? remaining : tier.capBase;
      out += (take * tier.priceX18) / X18;
      remaining -= take;
    } else {
      const costFull = (tier.capBase * tier.priceX18 + X18 - 1n) / X18;
      if (remaining >= costFull) {
        out += tier.capBase;
        remaining -= costFull;
      } else {
        out += (remaining * X18) / tier.priceX18;
        remaining = 0n;
      }
    }
  }
  if (remaining !== 0n) throw new CurveError('DepthExceeded', 'amountIn exceeds the curve depth');
  return out;
}

/**
 * What `PmmRouter.quote` returns: curveOut, or CurveError('InsufficientReserve') when it exceeds
 * the router's balance of the output token.
 */
export function quoteOut(curve: RouterCurve, side: CurveSide, amountIn: bigint, reserveOut: bigint): bigint {
  const out = curveOut(curve, side, amountIn);
  if (out > reserveOut) throw new CurveError('InsufficientReserve', 'output exceeds the router reserve');
  return out;
}

/** What `PmmRouter.swap` pays: floor(curveOut × (100000 − fee) / 100000). Reserves not checked. */
export function swapOut(curve: RouterCurve, side: CurveSide, amountIn: bigint, fee: bigint): bigint {
  return netOfFee(curveOut(curve, side, amountIn), fee);
}
