/**
 * The arithmetic of a firm quote (`amountOut` in a sign answer): the router's `swap` pays the
 * gross output of its curve less the signed fee, rounded down, and a `slippageBps` request
 * asks for a calldata minimum that many basis points under that amount, rounded down.
 */
import { FEE_DENOMINATOR } from '../requests/parse-fee';

/** Basis points in one whole. */
export const BPS_DENOMINATOR = 10_000n;
/** Largest `slippageBps` (100%: a minimum of 0). */
export const MAX_SLIPPAGE_BPS = 10_000;

/**
 * What the router's `swap` pays for a gross curve output (what its `quote()` returns) at
 * `fee` (units of 0.1 bps): `gross × (100,000 − fee) / 100,000`, rounded down, as the router does.
 */
export function netOfFee(grossOut: bigint, fee: bigint): bigint {
  return (grossOut * (FEE_DENOMINATOR - fee)) / FEE_DENOMINATOR;
}

/** The minimum for `slippageBps`: `floor(amountOut × (10,000 − slippageBps) / 10,000)`. */
export function slippageMinimum(amountOut: bigint, slippageBps: number): bigint {
  return (amountOut * (BPS_DENOMINATOR - BigInt(slippageBps))) / BPS_DENOMINATOR;
}
