/**
 * A pair's reference: the Chainlink-compatible feed (`AggregatorV3Interface`: `latestRoundData`,
 * `decimals`) whose answer is the base token's price in the chain's quote token, and the band the
 * pair's curve is held in against it. The one definition of the band's fields, bounds and defaults:
 * the indexer's settings (the defaults of every pair) and the chains setting's `references` (one
 * pair's own values) are both made from it.
 */

/** `enforce`: a pair out of band is withheld (fail closed); `watch`: it is only reported and alerted on. */
export type ReferenceMode = 'enforce' | 'watch';
export const REFERENCE_MODES: readonly ReferenceMode[] = ['enforce', 'watch'];

/** How far, and how long, a pair's curve may stray from its reference. */
export interface ReferenceBand {
  /** Largest deviation of the curve's mid below the reference, in basis points. */
  maxDeviationBelowBps: number;
  /** Largest deviation of the curve's mid above the reference, in basis points. */
  maxDeviationAboveBps: number;
  /** Largest age of the reference's answer (the block's time less its `updatedAt`), in seconds. */
  maxAgeSeconds: number;
  /** Consecutive computed blocks back inside the band before a withheld pair is served again. */
  recoveryBlocks: number;
  mode: ReferenceMode;
}

type NumericField = Exclude<keyof ReferenceBand, 'mode'>;

/** Each numeric field: its bounds, its default, its setting and what it means. */
export const REFERENCE_BAND_FIELDS: Readonly<
  Record<NumericField, { range: [number, number]; default: number; env: string; description: string }>
> = {
  maxDeviationBelowBps: {
    range: [1, 10_000],
    default: 50,
    env: 'REFERENCE_MAX_DEVIATION_BELOW_BPS',
    description:
      "Largest deviation of a pair's curve mid (the book's best bid and ask, averaged) below its reference, bps (default 50). " +
      "Keep it above the feed's deviation threshold (the reference may lag the market by that much) plus the market's move in a block.",
  },
  maxDeviationAboveBps: {
    range: [1, 10_000],
    default: 50,
    env: 'REFERENCE_MAX_DEVIATION_ABOVE_BPS',
    description: "Largest deviation of a pair's curve mid above its reference, bps (default 50); as the one below.",
  },
  maxAgeSeconds: {
    range: [1, 7 * 86_400],
    default: 3_600,
    env: 'REFERENCE_MAX_AGE_SECONDS',
    description:
      "Largest age of a pair's reference (the block's time less the feed's updatedAt), s (default 3600). Set it per pair to the " +
      "feed's heartbeat plus a margin: an older answer is stale, and the pair is withheld.",
  },
  recoveryBlocks: {
    range: [1, 10_000],
    default: 3,
    env: 'REFERENCE_RECOVERY_BLOCKS',
    description:
      'Consecutive computed blocks a withheld pair must be back inside its band (and its reference fresh and readable) before it ' +
      'is served again (default 3), so that a pair at the edge does not flap.',
  },
};

export const DEFAULT_REFERENCE_MODE: ReferenceMode = 'enforce';
export const REFERENCE_MODE_DESCRIPTION =
  'What a pair out of band (or whose reference is stale or unreadable) gets: enforce (default; fail closed) leaves it out of ' +
  'the book and the signer refuses its signs (503 PAIR_UNAVAILABLE); watch only reports it (metrics, alerts).';

/** A pair's reference as the chains setting gives it: the feed, and the band fields it sets itself. */
export interface PairReference {
  /** The feed's address (checksummed). */
  feed: string;
  band: Partial<ReferenceBand>;
}

/** `band`'s own fields over `defaults`. */
export function resolveBand(defaults: ReferenceBand, own: Partial<ReferenceBand> | undefined): ReferenceBand {
  return { ...defaults, ...own };
}
