/**
 * The per-block call: for every tracked pair, both sides, the whole ladder of `quote()`
 * calls, plus one `getReserveBalances` of every token, plus each pair's reference feed, as one
 * list of calls (sent as one `eth_call`, see call-batch.ts), and the decoding of its results
 * into the book's pairs and the feeds' answers.
 *
 * Layout of the call list (decoding relies on it):
 *   [0]                      helper.getReserveBalances([quote, base_0, base_1, …])
 *   then per pair, in order:  asks ladder (quote → base), then bids ladder (base → quote)
 *   then per pair with a reference, in order: feed.latestRoundData(), feed.decimals()
 *
 * Each `quote()` carries an EIP-712 `AmmVerification` signature by the quoter key with
 * timestampInMilisec = block.timestamp × 1000: one signature per (tokenIn, tokenOut) per
 * block, shared by every point of that side's ladder (the signature does not cover amountIn).
 */
import {
  quoteCalldataBuilder,
  signAmmVerification,
  type KeySigner,
  type PairOrderbook,
  type TokenInfo,
} from '@pmm/protocol';
import type { ReferenceBand } from '@pmm/core';
import type { RawLadder } from '../domain/ladder';
import { pairBook } from '../domain/pair-book';
import { decodeFeedAnswer, FEED_DECIMALS_CALLDATA, LATEST_ROUND_DATA_CALLDATA, type FeedAnswer } from './feed-answer';
import {
  decodeUint256Array,
  decodeUintResult,
  reserveBalancesCalldata,
  type Call,
  type CallResult,
} from './call-codec';

export interface TrackedPair {
  base: TokenInfo;
  ladder: RawLadder;
  /** The pair's reference feed and its band (the chain's deployment), when it has one. */
  reference?: { feed: string; band: ReferenceBand };
}

/** Calls per pair with a reference: latestRoundData and decimals. */
const FEED_CALLS = 2;

/** What the indexer tracks on a chain: the registry's pairs with their resolved ladders. */
export interface TrackedPairs {
  quote: TokenInfo;
  pairs: TrackedPair[];
}

export interface QuoteContext {
  chainId: number;
  router: string;
  helper: string;
  verifier: string;
  /** The quoter key: in memory (signs at once) or in a PKCS#11 module (signs later). */
  signer: KeySigner;
}

/** Number of calls {@link planBlockCalls} makes for `tracked`. */
export function callCount(tracked: TrackedPairs): number {
  return 1 + tracked.pairs.reduce((n, p) => n + p.ladder.asks.length + p.ladder.bids.length + feedCalls(p), 0);
}

const feedCalls = (p: TrackedPair): number => (p.reference ? FEED_CALLS : 0);

/**
 * The `quote()` calls of one side: input `tokenIn`, ladder `amounts`, one signature. A promise
 * when the quoter key is in a module.
 */
export function sideCalls(
  ctx: QuoteContext,
  tokenIn: string,
  tokenOut: string,
  amounts: readonly bigint[],
  timestampInMilisec: bigint,
): Call[] | Promise<Call[]> {
  if (amounts.length === 0) return [];
  const signature = signAmmVerification(ctx.signer, {
    chainId: ctx.chainId,
    verifier: ctx.verifier,
    tokenIn,
    tokenOut,
    timestampInMilisec,
  });
  const build = (sig: string): Call[] => {
    const calldata = quoteCalldataBuilder({ tokenIn, tokenOut, timestampInMilisec, signature: sig });
    return amounts.map((a) => ({ target: ctx.router, data: calldata(a) }));
  };
  return typeof signature === 'string' ? build(signature) : signature.then(build);
}

/**
 * The full call list of one block (layout in the file comment). With a key in a module, the
 * sides' signatures are asked for all at once (the module's sessions sign them side by side).
 */
export function planBlockCalls(
  tracked: TrackedPairs,
  ctx: QuoteContext,
  timestampInMilisec: bigint,
): Call[] | Promise<Call[]> {
  const quote = tracked.quote.address;
  const reserves: Call = {
    target: ctx.helper,
    data: reserveBalancesCalldata([quote, ...tracked.pairs.map((p) => p.base.address)]),
  };
  const sides = tracked.pairs.flatMap(({ base, ladder }) => [
    sideCalls(ctx, quote, base.address, ladder.asks, timestampInMilisec),
    sideCalls(ctx, base.address, quote, ladder.bids, timestampInMilisec),
  ]);
  const feeds = tracked.pairs.flatMap(({ reference }): Call[] =>
    reference
      ? [
          { target: reference.feed, data: LATEST_ROUND_DATA_CALLDATA },
          { target: reference.feed, data: FEED_DECIMALS_CALLDATA },
        ]
      : [],
  );
  const join = (lists: Call[][]): Call[] => [reserves, ...lists.flat(), ...feeds];
  return sides.some((side) => side instanceof Promise) ? Promise.all(sides).then(join) : join(sides as Call[][]);
}

/**
 * Decodes the results of {@link planBlockCalls} into the book's pairs (registry order).
 *
 * @throws when the reserves cannot be read: without them the ladders cannot be bounded
 */
export function decodeBlockResults(tracked: TrackedPairs, results: readonly CallResult[]): PairOrderbook[] {
  if (results.length !== callCount(tracked))
    throw new Error(`expected ${callCount(tracked)} results, got ${results.length}`);
  const reservesResult = results[0];
  if (!reservesResult?.success) throw new Error('getReserveBalances failed');
  const reserves = decodeUint256Array(reservesResult.data);
  if (reserves.length !== tracked.pairs.length + 1) throw new Error('getReserveBalances: wrong length');
  const quoteReserve = reserves[0] ?? 0n;
  let index = 1;
  const take = (n: number) => {
    const out = results.slice(index, index + n).map(decodeUintResult);
    index += n;
    return out;
  };
  return tracked.pairs.map(({ base, ladder }, i) => {
    const asks = { amountsIn: ladder.asks, amountsOut: take(ladder.asks.length) };
    const bids = { amountsIn: ladder.bids, amountsOut: take(ladder.bids.length) };
    return pairBook(base, tracked.quote, { asks, bids }, { base: reserves[i + 1] ?? 0n, quote: quoteReserve });
  });
}

/**
 * The feeds' answers from the results of {@link planBlockCalls}, by pair (registry order):
 * undefined for a pair without a reference or whose feed did not answer in shape.
 */
export function decodeFeedAnswers(tracked: TrackedPairs, results: readonly CallResult[]): (FeedAnswer | undefined)[] {
  let index = results.length - tracked.pairs.reduce((n, p) => n + feedCalls(p), 0);
  return tracked.pairs.map((p) => {
    if (!p.reference) return undefined;
    const answer = decodeFeedAnswer(results[index], results[index + 1]);
    index += FEED_CALLS;
    return answer;
  });
}
