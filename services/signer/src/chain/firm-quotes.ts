/**
 * The firm quote of a sign with `amountIn` (docs/decisions/0028-the-firm-quote.md): what the
 * chain's router pays for that amount in the state of the block whose book `/v2/price` serves.
 *
 * One sign, in order, within ONE deadline (FIRM_QUOTE_DEADLINE_MS from now, or the sign's own
 * `deadlineAt` when that comes first):
 * 1. the chain's book head from Redis (book-head.ts): the block number, hash and time of the
 *    book the gateway serves; no book (none yet, or expired: the indexer's head-lag rule) → 503;
 * 2. the router's `quote(tokenIn, amountIn, tokenOut, blockTime × 1000, sig)` at that block's
 *    hash (EIP-1898, requireCanonical), `sig` the quoter key's EIP-712 authorisation, signed
 *    once per side and block and reused. The node calls are quote-calls.ts's
 *    (docs/decisions/0070-firm-quotes-share-a-flight-and-a-round-trip.md): the same quote at the
 *    same block is asked once and its answer kept for the block; the distinct quotes of a block
 *    that arrive together go in one `eth_call` of Multicall3 `aggregate3`; a call that cannot
 *    end by the deadline is not started (503, `timeout`);
 * 3. its one-word answer, the gross curve output (the caller takes the fee off: netOfFee).
 *
 * A node that does not answer in time, answers garbage, does not know the block (it lags the
 * indexer's node) or reverts for another reason than the amount → 503 SERVICE_UNAVAILABLE,
 * never a guessed amount. A revert for the amount itself (past the curve's depth, over the
 * router's reserves) → 422 VALIDATION_ERROR on `amountIn`, and for the pair (the router does
 * not list it, whatever the registry says) → 400 PAIR_NOT_FOUND: retrying will not help.
 */
import {
  ApiError,
  functionSelector,
  quoteCalldataBuilder,
  signAmmVerification,
  type CallResult,
  type KeySigner,
} from '@pmm/protocol';
import { RpcTimeoutError, type RpcTransport } from '@pmm/core';
import type { BookHead } from '../store/book-head';
import { createQuoteCalls, NodeGarbage, NoTimeLeft, type QuoteCalls } from './quote-calls';

/** Where one chain's firm quotes come from. */
export interface FirmQuoteChain {
  /** The signer's connection to the chain's node (HTTP, capped, timed: @pmm/core's transport). */
  rpc: RpcTransport;
  router: string;
  /** The EIP-712 verifier of the quoter's authorisation (its domain's verifyingContract). */
  verifier: string;
  /** A key the router whitelists as quoter (`isQuoter`). */
  quoter: KeySigner;
  /** Multicall3 (the deployment's `contracts.multicall3`): a block's quotes in one eth_call; absent: a JSON-RPC batch. */
  multicall3?: string;
}

export interface FirmQuoteRequest {
  chainId: number;
  tokenIn: string;
  tokenOut: string;
  amountIn: bigint;
  /**
   * When the sign must be answered (absolute ms, this process's clock): the quote ends by
   * this or FIRM_QUOTE_DEADLINE_MS from now, whichever comes first, and asks the node nothing
   * it cannot have answered by then.
   */
  deadlineAt?: number;
}

export interface FirmQuote {
  /** The router's `quote()`: the curve's output before the fee. */
  grossOut: bigint;
  /** The block whose state it is exact for (the served book's). */
  blockNumber: number;
}

/** Resolves the firm quote or throws an ApiError (503, or 422 for an amount the router cannot fill). */
export type FirmQuotes = (req: FirmQuoteRequest) => Promise<FirmQuote>;

export interface FirmQuotesOptions {
  /** The chains with a node and a quoter key; a served chain absent here has no firm quotes (503). */
  chains: ReadonlyMap<number, FirmQuoteChain>;
  /** The head of the book the gateway serves for a chain, or null when there is none. */
  bookHead(chainId: number): Promise<BookHead | null>;
  /** The whole firm quote (Redis read, signature, node round trip) ends within this. */
  deadlineMs: number;
  /** Called with each outcome (metrics). */
  onOutcome?(chainId: number, outcome: FirmQuoteOutcome): void;
  /** Called for each round trip to a chain's node: the quotes it carries and its `eth_call`s (metrics). */
  onRoundTrip?(chainId: number, quotes: number, ethCalls: number): void;
  /** Most quotes in one round trip (quote-calls.ts's default otherwise). */
  maxBatch?: number;
}

export type FirmQuoteOutcome =
  | 'quoted'
  | 'unfillable'
  | 'no_book'
  | 'book_unreadable'
  | 'node_failed'
  | 'node_garbage'
  | 'quoter_failed'
  | 'timeout'
  | 'unconfigured';

/** The router's errors that mean "not this amount" (PmmRouter.sol), as 4-byte selectors. */
const AMOUNT_ERRORS = new Map(
  ['DepthExceeded()', 'InsufficientReserve(uint256,uint256)', 'ZeroAmount()'].map((s) => [functionSelector(s), s]),
);

const PAIR_NOT_LISTED = functionSelector('PairNotListed(address,address)');

/** The router's own answer for the block (an amount, or a revert for the amount or the pair): kept for the block. */
function routerAnswered(result: CallResult): boolean {
  if (result.success) return result.data.length === 66;
  const selector = result.data.slice(0, 10);
  return selector === PAIR_NOT_LISTED || AMOUNT_ERRORS.has(selector);
}

/** Why there is no firm amount: the outcome for the metrics, the reason for the message. */
class NoFirmAmount extends Error {
  constructor(
    readonly outcome: Exclude<FirmQuoteOutcome, 'quoted' | 'unfillable'>,
    readonly reason: string,
    options?: { cause?: unknown },
  ) {
    super(reason, options);
  }
}

function unavailable(chainId: number, err: NoFirmAmount): ApiError {
  return new ApiError(
    'SERVICE_UNAVAILABLE',
    `chain ${chainId}: no firm amount for amountIn right now (${err.reason}); retry shortly, or sign without amountIn`,
    {},
    { cause: err.cause ?? err },
  );
}

export function createFirmQuotes(opts: FirmQuotesOptions): FirmQuotes {
  // The latest authorisation per chain and side: every sign of a side in one block shares it.
  const authorisations = new Map<string, { timestampMs: bigint; sig: Promise<string> }>();
  const authorisation = (chainId: number, chain: FirmQuoteChain, req: FirmQuoteRequest, timestampMs: bigint) => {
    const key = `${chainId}:${req.tokenIn}:${req.tokenOut}`;
    const cached = authorisations.get(key);
    if (cached && cached.timestampMs === timestampMs) return cached.sig;
    const sig = Promise.resolve(
      signAmmVerification(chain.quoter, {
        chainId,
        verifier: chain.verifier,
        tokenIn: req.tokenIn,
        tokenOut: req.tokenOut,
        timestampInMilisec: timestampMs,
      }),
    );
    // A failed signature (the module is down) is not kept: the next sign asks again.
    // Only its own entry: a newer one may have replaced it meanwhile.
    sig.catch(() => {
      if (authorisations.get(key)?.sig === sig) authorisations.delete(key);
    });
    authorisations.set(key, { timestampMs, sig });
    return sig;
  };

  // Each chain's node calls: one flight per quote and block, one round trip per burst.
  const calls = new Map<number, QuoteCalls>();
  const callsOf = (chainId: number, chain: FirmQuoteChain): QuoteCalls => {
    let c = calls.get(chainId);
    if (!c) {
      c = createQuoteCalls({
        rpc: chain.rpc,
        router: chain.router,
        multicall3: chain.multicall3,
        maxBatch: opts.maxBatch,
        keep: routerAnswered,
        onRoundTrip: (quotes, ethCalls) => opts.onRoundTrip?.(chainId, quotes, ethCalls),
      });
      calls.set(chainId, c);
    }
    return c;
  };

  const quote = async (
    req: FirmQuoteRequest,
    chain: FirmQuoteChain,
    deadline: number,
    late: () => NoFirmAmount,
  ): Promise<FirmQuote> => {
    let head: BookHead | null;
    try {
      head = await opts.bookHead(req.chainId);
    } catch (err) {
      throw new NoFirmAmount('book_unreadable', 'the live book cannot be read', { cause: err });
    }
    if (!head) throw new NoFirmAmount('no_book', 'no live book');
    const timestampMs = BigInt(head.time) * 1000n;
    const key = { blockHash: head.hash, tokenIn: req.tokenIn, tokenOut: req.tokenOut, amountIn: req.amountIn };
    let result: CallResult;
    try {
      // Asked only by the request that starts the quote's flight.
      const calldata = async () => {
        const signature = await authorisation(req.chainId, chain, req, timestampMs).catch((err: unknown) => {
          throw new NoFirmAmount('quoter_failed', 'the quote could not be authorised', { cause: err });
        });
        return quoteCalldataBuilder({
          tokenIn: req.tokenIn,
          tokenOut: req.tokenOut,
          timestampInMilisec: timestampMs,
          signature,
        })(req.amountIn);
      };
      result = await callsOf(req.chainId, chain).call(key, deadline, calldata);
    } catch (err) {
      // The round trip was given what was left of the deadline: its own timeout is the deadline's,
      // and usually fires a moment before the deadline's timer does.
      if (err instanceof RpcTimeoutError) throw late();
      if (err instanceof NoTimeLeft) throw new NoFirmAmount('timeout', err.message);
      if (err instanceof NodeGarbage)
        throw new NoFirmAmount('node_garbage', 'the node answered garbage', { cause: err });
      // The quoter key failed (its module is down): the same outage for the integrator.
      if (err instanceof NoFirmAmount) throw err;
      throw new NoFirmAmount('node_failed', 'the node did not quote', { cause: err });
    }
    // One uint256 word, nothing else: anything longer or shorter is not the router's answer.
    if (result.success) {
      if (result.data.length !== 66) throw new NoFirmAmount('node_garbage', 'the node answered garbage');
      return { grossOut: BigInt(result.data), blockNumber: head.number };
    }
    const selector = result.data.slice(0, 10);
    if (selector === PAIR_NOT_LISTED) {
      // The router is the authority on what trades: the registry the signer holds lags a delisting.
      throw new ApiError(
        'PAIR_NOT_FOUND',
        `tokenIn, tokenOut: the router does not list this pair at block ${head.number} on chain ${req.chainId}`,
      );
    }
    const reverted = AMOUNT_ERRORS.get(selector);
    if (reverted) {
      throw new ApiError(
        'VALIDATION_ERROR',
        `amountIn: the router cannot fill ${req.amountIn} at block ${head.number} (${reverted.replace(/\(.*$/, '')})`,
      );
    }
    throw new NoFirmAmount('node_failed', 'the node did not quote', {
      cause: new Error(`reverted ${selector || '0x'}`),
    });
  };

  return async (req) => {
    const chain = opts.chains.get(req.chainId);
    let timer: NodeJS.Timeout | undefined;
    try {
      if (!chain) throw new NoFirmAmount('unconfigured', 'firm quotes are not configured for this chain');
      const now = Date.now();
      const own = now + opts.deadlineMs;
      const deadline = Math.min(own, req.deadlineAt ?? own);
      const late = () =>
        new NoFirmAmount(
          'timeout',
          deadline < own ? "no answer before the sign's deadline" : `no answer within ${opts.deadlineMs} ms`,
        );
      // Nothing is started for a sign whose deadline has passed (it waited in a queue).
      if (deadline <= now) throw late();
      // The deadline covers every step, a stalled Redis or quoter module included.
      const expiry = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(late()), deadline - now);
      });
      const result = await Promise.race([quote(req, chain, deadline, late), expiry]);
      opts.onOutcome?.(req.chainId, 'quoted');
      return result;
    } catch (err) {
      if (err instanceof NoFirmAmount) {
        opts.onOutcome?.(req.chainId, err.outcome);
        throw unavailable(req.chainId, err);
      }
      // Counted here, once: an answer after the deadline's (already counted as timeout) never gets here.
      if (err instanceof ApiError) {
        opts.onOutcome?.(req.chainId, 'unfillable');
        throw err;
      }
      // Nothing else is expected here; like a quoter key that fails, an outage for the integrator.
      opts.onOutcome?.(req.chainId, 'quoter_failed');
      throw unavailable(
        req.chainId,
        new NoFirmAmount('quoter_failed', 'the quote could not be authorised', { cause: err }),
      );
    } finally {
      clearTimeout(timer);
    }
  };
}
