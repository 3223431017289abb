/**
 * What the orderbook predicts a swap will pay, before fees: walk the levels of the side the
 * taker hits, best first, until `amountIn` is spent. Integer arithmetic throughout (each price
 * at the places it is written with: 12 significant digits can mean more than 18 places for a
 * tiny price), rounding against the taker like the book itself, so the estimate is never
 * better than what the router would pay at a ladder point.
 */
import { netOfFee, parseUnits, type PairOrderbook } from '@pmm/protocol';

export interface BookEstimateParams {
  pair: PairOrderbook;
  /** The token the taker pays: the pair's quote token (buying base, hits asks) or its base (selling, hits bids). */
  tokenIn: string;
  /** In wei of tokenIn. */
  amountIn: bigint;
  baseDecimals: number;
  quoteDecimals: number;
  /** Fee in 0.1 bps, deducted from the output as the router does. Default 0. */
  fee?: bigint;
}

export interface BookEstimate {
  /** Output in wei of the other token, net of the fee. */
  amountOut: bigint;
  /** Part of amountIn the book could not fill (0 when fully filled). */
  unfilledIn: bigint;
}

const ceilDiv = (a: bigint, b: bigint): bigint => (a + b - 1n) / b;

export function estimateFromBook(p: BookEstimateParams): BookEstimate {
  const buying = p.tokenIn.toLowerCase() === p.pair.quoteToken.toLowerCase();
  if (!buying && p.tokenIn.toLowerCase() !== p.pair.baseToken.toLowerCase())
    throw new Error('tokenIn is not a token of this pair');
  const baseUnit = 10n ** BigInt(p.baseDecimals);
  const quoteUnit = 10n ** BigInt(p.quoteDecimals);
  let remaining = p.amountIn;
  let out = 0n;
  for (const level of buying ? p.pair.asks : p.pair.bids) {
    if (remaining === 0n) break;
    const levelBase = parseUnits(level.amount, p.baseDecimals);
    const priceDecimals = level.price.split('.')[1]?.length ?? 0;
    const price = parseUnits(level.price, priceDecimals);
    // Quote value of the whole level in quote wei: base × price, rounded against the taker.
    const scale = baseUnit * 10n ** BigInt(priceDecimals);
    if (buying) {
      const levelCost = ceilDiv(levelBase * price * quoteUnit, scale);
      if (remaining >= levelCost) {
        out += levelBase;
        remaining -= levelCost;
      } else {
        out += (remaining * scale) / (price * quoteUnit);
        remaining = 0n;
      }
    } else {
      const take = remaining < levelBase ? remaining : levelBase;
      out += (take * price * quoteUnit) / scale;
      remaining -= take;
    }
  }
  const fee = p.fee ?? 0n;
  return { amountOut: netOfFee(out, fee), unfilledIn: remaining };
}
