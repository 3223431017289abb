/**
 * The limits on what executes and what reverts (docs/operations/halts.md#limits-that-trip-on-what-executes):
 * their settings, each off until given, and what they load into. Amounts are in the chain's quote token
 * (human units: 5000 is 5,000 USDC), shares and markouts in basis points. A ledger process serves
 * one chain, so a setting applies to each chain's ledger it reaches.
 */
import { ConfigError, settings } from '@pmm/core';
import { HORIZONS, type HorizonKey } from '@pmm/operator';

const HORIZON_KEYS = HORIZONS.map((h) => h.key);

export const LIMIT_SETTINGS = {
  limitWindowSeconds: settings.int(
    'LIMIT_WINDOW_SECONDS',
    'The rolling window of every limit on executed swaps, seconds: the notional caps sum the swaps executed in it, the markout floor and the below-quote share average over them. It restarts at a resume of the scope (`npm run risk -- resume`): swaps executed before it never count again. Default 3600.',
    3_600,
    [60, 30 * 86_400],
  ),
  limitIntegratorNotional: settings.optionalDecimal(
    'LIMIT_INTEGRATOR_NOTIONAL',
    "Cap on an integrator's executed notional on the chain within LIMIT_WINDOW_SECONDS, in the chain's quote token (e.g. 250000): above it the ledger halts the integrator (every chain). Empty (default): off.",
  ),
  limitPairNotional: settings.optionalDecimal(
    'LIMIT_PAIR_NOTIONAL',
    "Cap on a pair's executed notional (every integrator's, unattributed swaps too) within LIMIT_WINDOW_SECONDS, in the chain's quote token: above it the ledger halts the pair on its chain. Empty (default): off.",
  ),
  limitMarkoutFloorBps: settings.optionalDecimal(
    'LIMIT_MARKOUT_FLOOR_BPS',
    "Floor of an integrator's mean markout at LIMIT_MARKOUT_HORIZON over its swaps in LIMIT_WINDOW_SECONDS, basis points from the maker's side (e.g. -20: the maker loses 20 bps on average): below it, over at least LIMIT_MARKOUT_MIN_SWAPS swaps, the ledger halts the integrator. Empty (default): off.",
    { signed: true },
  ),
  limitReferenceMarkoutFloorBps: settings.optionalDecimal(
    'LIMIT_REFERENCE_MARKOUT_FLOOR_BPS',
    "Floor of an integrator's mean markout against the pair's reference (its feed's answer at the horizon, not the maker's own mid) at LIMIT_MARKOUT_HORIZON over its swaps with one in LIMIT_WINDOW_SECONDS, basis points from the maker's side: below it, over at least LIMIT_MARKOUT_MIN_SWAPS swaps, the ledger halts the integrator. A curve that stopped moving marks its losses at zero against its own mid; this floor sees them. Empty (default): off.",
    { signed: true },
  ),
  limitMarkoutHorizon: settings.oneOf(
    'LIMIT_MARKOUT_HORIZON',
    `The markout horizon both markout floors apply to: ${HORIZON_KEYS.join(', ')} (blocks or seconds after the swap; a swap counts once its horizon has passed). Default 60s.`,
    '60s',
    HORIZON_KEYS,
  ),
  limitMarkoutMinSwaps: settings.int(
    'LIMIT_MARKOUT_MIN_SWAPS',
    'Swaps with a markout an integrator needs in the window before LIMIT_MARKOUT_FLOOR_BPS (or LIMIT_REFERENCE_MARKOUT_FLOOR_BPS, counting its swaps with a reference markout) applies (a few swaps prove nothing). Default 20.',
    20,
    [1, 100_000],
  ),
  limitBelowQuoteShareBps: settings.optionalDecimal(
    'LIMIT_BELOW_QUOTE_SHARE_BPS',
    "Cap on the share of an integrator's swaps with a firm quote (signed with amountIn) that executed below their quote, within LIMIT_WINDOW_SECONDS, basis points (5000: half of them): above it, over at least LIMIT_BELOW_QUOTE_MIN_SWAPS such swaps, the ledger halts the integrator. Empty (default): off.",
    { max: 10_000 },
  ),
  limitBelowQuoteMinSwaps: settings.int(
    'LIMIT_BELOW_QUOTE_MIN_SWAPS',
    'Swaps with a firm quote an integrator needs in the window before LIMIT_BELOW_QUOTE_SHARE_BPS applies. Default 20.',
    20,
    [1, 100_000],
  ),
  limitRevertShareBps: settings.optionalDecimal(
    'LIMIT_REVERT_SHARE_BPS',
    "Trip level of the share of an integrator's router calls on the chain that reverted (reverted calls attributed to it, over those and its executed swaps) within LIMIT_WINDOW_SECONDS, basis points (2000: a fifth): above it, over at least LIMIT_REVERT_MIN_CALLS calls, the ledger halts the integrator. After an operator's resume of such a trip, the integrator is held to LIMIT_REVERT_REARM_BPS for a whole window (hysteresis). Empty (default): off.",
    { max: 10_000 },
  ),
  limitRevertRearmBps: settings.optionalDecimal(
    'LIMIT_REVERT_REARM_BPS',
    'Re-arm level of LIMIT_REVERT_SHARE_BPS, basis points, below the trip level: for LIMIT_WINDOW_SECONDS after an operator resumes an integrator this limit tripped, a revert share above it halts the integrator again (its flow must come back below it, not only below the trip level). Empty (default): half the trip level.',
    { max: 10_000 },
  ),
  limitRevertMinCalls: settings.int(
    'LIMIT_REVERT_MIN_CALLS',
    'Router calls (executed or reverted) an integrator needs in the window before LIMIT_REVERT_SHARE_BPS applies. Default 20.',
    20,
    [1, 100_000],
  ),
  limitUnusedShareBps: settings.optionalDecimal(
    'LIMIT_UNUSED_SHARE_BPS',
    "Trip level of the share of an integrator's firm signatures (signed on /v2 with amountIn) on the chain whose window passed, within LIMIT_WINDOW_SECONDS by deadline, unused (no swap and no reverted call carried them), basis points (9000: nine in ten): above it, over at least LIMIT_UNUSED_MIN_FIRM of them, the ledger halts the integrator. After an operator's resume of such a trip, the integrator is held to LIMIT_UNUSED_REARM_BPS for a whole window (hysteresis). Empty (default): off.",
    { max: 10_000 },
  ),
  limitUnusedRearmBps: settings.optionalDecimal(
    'LIMIT_UNUSED_REARM_BPS',
    'Re-arm level of LIMIT_UNUSED_SHARE_BPS, basis points, below the trip level: for LIMIT_WINDOW_SECONDS after an operator resumes an integrator this limit tripped, an unused share above it halts the integrator again. Empty (default): half the trip level.',
    { max: 10_000 },
  ),
  limitUnusedMinFirm: settings.int(
    'LIMIT_UNUSED_MIN_FIRM',
    'Firm signatures whose window passed an integrator needs in the window before LIMIT_UNUSED_SHARE_BPS applies. Default 50.',
    50,
    [1, 1_000_000],
  ),
};

/** A floor on an integrator's mean markout at a horizon, over at least `minSwaps` swaps. */
export interface MarkoutFloor {
  floorBps: number;
  horizon: HorizonKey;
  minSwaps: number;
}

/** The limits as loaded: a limit is absent when off. */
export interface LimitConfig {
  windowSeconds: number;
  /** Caps as decimal text in quote units (exact: compared at 18 decimals). */
  integratorNotional?: string;
  pairNotional?: string;
  markout?: MarkoutFloor;
  /** The same floor against the pair's reference. */
  referenceMarkout?: MarkoutFloor;
  belowQuote?: { shareBps: number; minSwaps: number };
  /** The revert share: tripped above `shareBps`, above `rearmBps` for a window after a resume of its trip. */
  reverts?: ShareLimit & { minCalls: number };
  /** The unused share of firm signatures, the same way. */
  unused?: ShareLimit & { minFirm: number };
}

/** A share's two levels, basis points (hysteresis: the re-arm level is below the trip level). */
export interface ShareLimit {
  shareBps: number;
  rearmBps: number;
}

type LoadedLimitSettings = {
  [K in keyof typeof LIMIT_SETTINGS]: (typeof LIMIT_SETTINGS)[K] extends { parse(raw: unknown): infer T } ? T : never;
};

/** The loaded settings as a LimitConfig; a cap of 0 is refused (it would halt at the first swap: set it off instead). */
export function limitConfigOf(c: LoadedLimitSettings): LimitConfig {
  for (const [env, value] of [
    ['LIMIT_INTEGRATOR_NOTIONAL (limitIntegratorNotional)', c.limitIntegratorNotional],
    ['LIMIT_PAIR_NOTIONAL (limitPairNotional)', c.limitPairNotional],
  ] as const)
    if (value !== '' && Number(value) === 0)
      throw new ConfigError(`${env}: a cap of 0 would halt at the first swap; leave it empty for off`);
  const floor = (bps: string): MarkoutFloor => ({
    floorBps: Number(bps),
    horizon: c.limitMarkoutHorizon,
    minSwaps: c.limitMarkoutMinSwaps,
  });
  const reverts = shareLimit(c.limitRevertShareBps, c.limitRevertRearmBps, 'LIMIT_REVERT', 'limitRevertRearmBps');
  const unused = shareLimit(c.limitUnusedShareBps, c.limitUnusedRearmBps, 'LIMIT_UNUSED', 'limitUnusedRearmBps');
  return {
    windowSeconds: c.limitWindowSeconds,
    ...(c.limitIntegratorNotional !== '' ? { integratorNotional: c.limitIntegratorNotional } : {}),
    ...(c.limitPairNotional !== '' ? { pairNotional: c.limitPairNotional } : {}),
    ...(c.limitMarkoutFloorBps !== '' ? { markout: floor(c.limitMarkoutFloorBps) } : {}),
    ...(c.limitReferenceMarkoutFloorBps !== '' ? { referenceMarkout: floor(c.limitReferenceMarkoutFloorBps) } : {}),
    ...(c.limitBelowQuoteShareBps !== ''
      ? { belowQuote: { shareBps: Number(c.limitBelowQuoteShareBps), minSwaps: c.limitBelowQuoteMinSwaps } }
      : {}),
    ...(reverts ? { reverts: { ...reverts, minCalls: c.limitRevertMinCalls } } : {}),
    ...(unused ? { unused: { ...unused, minFirm: c.limitUnusedMinFirm } } : {}),
  };
}

/** A share limit's levels, or undefined when off; a re-arm level not below the trip level is refused. */
function shareLimit(share: string, rearm: string, env: string, key: string): ShareLimit | undefined {
  if (share === '') return undefined;
  const shareBps = Number(share);
  const rearmBps = rearm === '' ? shareBps / 2 : Number(rearm);
  if (!(rearmBps < shareBps))
    throw new ConfigError(
      `${env}_REARM_BPS (${key}): ${rearmBps} must be below the trip level ${env}_SHARE_BPS (${shareBps}): the hysteresis re-arms lower than it trips`,
    );
  return { shareBps, rearmBps };
}
