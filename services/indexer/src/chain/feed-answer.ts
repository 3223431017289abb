/**
 * The reference feed's calls in the per-block call (block-quotes.ts): `latestRoundData()` and
 * `decimals()` of Chainlink's `AggregatorV3Interface`, and the strict reading of their answers.
 * Fixed layouts, read word by word like the rest of the block call (call-codec.ts). An answer of
 * any other shape is no answer: a feed that answers garbage is unreadable, never read on a guess.
 */
import { functionSelector, type CallResult } from '@pmm/protocol';

export const LATEST_ROUND_DATA_CALLDATA = functionSelector('latestRoundData()');
export const FEED_DECIMALS_CALLDATA = functionSelector('decimals()');

/** What a feed answered at a block. */
export interface FeedAnswer {
  roundId: bigint;
  /** The price of one base token in quote tokens, with `decimals` decimals (may be ≤ 0: checked by the band). */
  answer: bigint;
  /** Unix seconds of the round's answer. */
  updatedAt: number;
  decimals: number;
}

/** Decimals a feed may have: those of a token (an answer scaled by more is no price). */
const MAX_FEED_DECIMALS = 36;
const UINT80_LIMIT = 1n << 80n;
const INT256_SIGN = 1n << 255n;
const WORD = 64;

const word = (hex: string, i: number): bigint => BigInt('0x' + hex.slice(2 + i * WORD, 2 + (i + 1) * WORD));

/**
 * The feed's answer from the results of its two calls, or undefined when either failed or has
 * another shape: not exactly five words (one for decimals), a round id or answeredInRound past a
 * uint80, decimals past {@link MAX_FEED_DECIMALS}, an updatedAt past a safe integer.
 */
export function decodeFeedAnswer(
  latest: CallResult | undefined,
  decimals: CallResult | undefined,
): FeedAnswer | undefined {
  if (!latest?.success || !decimals?.success) return undefined;
  if (latest.data.length !== 2 + 5 * WORD || decimals.data.length !== 2 + WORD) return undefined;
  if (!/^0x[0-9a-fA-F]*$/.test(latest.data) || !/^0x[0-9a-fA-F]*$/.test(decimals.data)) return undefined;
  const d = word(decimals.data, 0);
  if (d > BigInt(MAX_FEED_DECIMALS)) return undefined;
  const roundId = word(latest.data, 0);
  const rawAnswer = word(latest.data, 1);
  const updatedAt = word(latest.data, 3);
  const answeredInRound = word(latest.data, 4);
  if (roundId >= UINT80_LIMIT || answeredInRound >= UINT80_LIMIT) return undefined;
  if (updatedAt > BigInt(Number.MAX_SAFE_INTEGER)) return undefined;
  return {
    roundId,
    answer: rawAnswer >= INT256_SIGN ? rawAnswer - (1n << 256n) : rawAnswer,
    updatedAt: Number(updatedAt),
    decimals: Number(d),
  };
}
