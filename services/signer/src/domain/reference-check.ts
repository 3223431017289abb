/**
 * What a pair's reference means at the sign (docs/operations/references.md): a pair the indexer
 * withholds is refused, 503 PAIR_UNAVAILABLE with the Retry-After it published, from the block that
 * shows the breach; a pair with a reference and no fresh standing, 503 SERVICE_UNAVAILABLE (fail
 * closed); and a firm quote whose executed price is better for the taker than the pair's band
 * allows against the reference, 503 PAIR_UNAVAILABLE too. Neither message says why: the integrator
 * learns the pair is not offered for now, as with a halt, not what the maker's risk saw.
 */
import { ApiError, type PairRegistry, type TokenInfo } from '@pmm/protocol';
import type { PairBandState } from '@pmm/core';
import { StandingUnknown } from '../store/reference-standings';

/** Why a sign was refused against a reference (the refusals metric's `reason`). */
export type ReferenceRefusal = 'withheld' | 'firm_price' | 'unknown';

/** Where the signer reads the standings (store/reference-standings.ts). */
export interface StandingSource {
  standing(chainId: number, base: string): PairBandState | undefined;
}

/** No pair has a reference (the app built by hand: benchmarks, tests of other steps). */
export const NO_REFERENCES: StandingSource = { standing: () => undefined };

const unavailable = (retryAfterSeconds: number) =>
  new ApiError('PAIR_UNAVAILABLE', 'this pair is not offered for the moment; retry after the time given', {
    'Retry-After': String(Math.max(1, Math.ceil(retryAfterSeconds))),
  });

/**
 * The pair's standing (undefined: no reference, or watch mode's, which refuses nothing);
 * throws PAIR_UNAVAILABLE when withheld, SERVICE_UNAVAILABLE when unknown.
 */
export function checkStanding(
  standings: StandingSource,
  chainId: number,
  base: string,
  refused: (reason: ReferenceRefusal) => void,
): PairBandState | undefined {
  let state: PairBandState | undefined;
  try {
    state = standings.standing(chainId, base);
  } catch (err) {
    if (!(err instanceof StandingUnknown)) throw err;
    refused('unknown');
    throw new ApiError('SERVICE_UNAVAILABLE', 'signing is paused for a moment; retry shortly', {}, { cause: err });
  }
  if (!state || state.mode !== 'enforce') return undefined;
  if (state.withheld) {
    refused('withheld');
    throw unavailable(state.retryAfterSeconds ?? 1);
  }
  return state;
}

/**
 * Throws PAIR_UNAVAILABLE when a firm quote's price (the router's gross amount, fee aside) is
 * better for the taker than the band allows: buying the base below reference × (1 − below), or
 * selling it above reference × (1 + above). A price worse for the taker is the curve's spread
 * and depth at work, and is what the book advertises.
 */
export function checkFirmPrice(
  state: PairBandState,
  pair: PairOfSign,
  amountIn: bigint,
  grossOut: bigint,
  refused: (reason: ReferenceRefusal) => void,
): void {
  const reference = state.referencePrice;
  if (reference === undefined) return; // withheld already when the reference is unreadable
  const human = (raw: bigint, decimals: number) => Number(raw) / 10 ** decimals;
  const { quote, base, buysBase } = pair;
  const [quoteAmount, baseAmount] = buysBase
    ? [human(amountIn, quote.decimals), human(grossOut, base.decimals)]
    : [human(grossOut, quote.decimals), human(amountIn, base.decimals)];
  if (!(baseAmount > 0)) return; // nothing bought: nothing given away
  const price = quoteAmount / baseAmount;
  const tooGood = buysBase
    ? price < reference * (1 - state.maxDeviationBelowBps / 10_000)
    : price > reference * (1 + state.maxDeviationAboveBps / 10_000);
  if (tooGood) {
    refused('firm_price');
    throw unavailable(1);
  }
}

/** A sign's pair: its quote and base tokens, and which way the taker goes. */
export interface PairOfSign {
  quote: TokenInfo;
  base: TokenInfo;
  /** tokenIn is the quote token: the taker buys the base. */
  buysBase: boolean;
}

/** The pair of a sign already checked against the registry (sign-quote.ts): one leg is the quote token, the other a base. */
export function pairOfSign(registry: PairRegistry, req: { tokenIn: string; tokenOut: string }): PairOfSign | undefined {
  const quote = registry.quoteToken;
  const buysBase = req.tokenIn.toLowerCase() === quote.address.toLowerCase();
  const baseAddress = (buysBase ? req.tokenOut : req.tokenIn).toLowerCase();
  const base = registry.baseTokens.find((t) => t.address.toLowerCase() === baseAddress);
  return base ? { quote, base, buysBase } : undefined;
}
