/**
 * The firm quote of a sign with `amountIn` (docs/decisions/0028-the-firm-quote.md): what the
 * chain's router pays for that amount in the state of the block whose book `/v2/price` serves.
 *
 * One sign, in order, within ONE deadline (FIRM_QUOTE_DEADLINE_MS):
 * 1. the chain's book head from Redis (book-head.ts): the block number, hash and time of the
 *    book the gateway serves; no book (none yet, or expired: the indexer's head-lag rule) → 503;
 * 2. the router's `quote(tokenIn, amountIn, tokenOut, blockTime × 1000, sig)` in one
 *    `eth_call` pinned to that block's hash (EIP-1898, requireCanonical), `sig` the quoter
 *    key's EIP-712 authorisation, signed once per side and block and reused;
 * 3. its one-word answer, the gross curve output (the caller takes the fee off: netOfFee).
 *
 * A node that does not answer in time, answers garbage, does not know the block (it lags the
 * indexer's node) or reverts for another reason than the amount → 503 SERVICE_UNAVAILABLE,
 * never a guessed amount. A revert for the amount itself (past the curve's depth, over the
 * router's reserves) → 422 VALIDATION_ERROR on `amountIn`, and for the pair (the router does
 * not list it, whatever the registry says) → 400 PAIR_NOT_FOUND: retrying will not help.
 */
import { ApiError, functionSelector, quoteCalldataBuilder, signAmmVerification, type KeySigner } from '@pmm/protocol';
import { blockHashRef, isHexBytes, revertData, RpcError, RpcTimeoutError, type RpcTransport } from '@pmm/core';
import type { BookHead } from '../store/book-head';

/** Where one chain's firm quotes come from. */
export interface FirmQuoteChain {
  /** The signer's connection to the chain's node (HTTP, capped, timed: @pmm/core's transport). */
  rpc: RpcTransport;
  router: string;
  /** The EIP-712 verifier of the quoter's authorisation (its domain's verifyingContract). */
  verifier: string;
  /** A key the router whitelists as quoter (`isQuoter`). */
  quoter: KeySigner;
}

export interface FirmQuoteRequest {
  chainId: number;
  tokenIn: string;
  tokenOut: string;
  amountIn: bigint;
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

  const quote = async (req: FirmQuoteRequest, chain: FirmQuoteChain, deadline: number): Promise<FirmQuote> => {
    let head: BookHead | null;
    try {
      head = await opts.bookHead(req.chainId);
    } catch (err) {
      throw new NoFirmAmount('book_unreadable', 'the live book cannot be read', { cause: err });
    }
    if (!head) throw new NoFirmAmount('no_book', 'no live book');
    const timestampMs = BigInt(head.time) * 1000n;
    const sig = await authorisation(req.chainId, chain, req, timestampMs);
    const data = quoteCalldataBuilder({
      tokenIn: req.tokenIn,
      tokenOut: req.tokenOut,
      timestampInMilisec: timestampMs,
      signature: sig,
    })(req.amountIn);
    const remaining = deadline - Date.now();
    if (remaining <= 0) throw new NoFirmAmount('timeout', `no answer within ${opts.deadlineMs} ms`);
    let raw: unknown;
    try {
      raw = await chain.rpc.request('eth_call', [{ to: chain.router, data }, blockHashRef(head.hash)], remaining);
    } catch (err) {
      // The call was given what was left of the deadline: its own timeout is the deadline's, and
      // usually fires a moment before the deadline's timer does.
      if (err instanceof RpcTimeoutError) throw new NoFirmAmount('timeout', `no answer within ${opts.deadlineMs} ms`);
      const selector = err instanceof RpcError ? revertData(err).slice(0, 10) : '';
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
      throw new NoFirmAmount('node_failed', 'the node did not quote', { cause: err });
    }
    // One uint256 word, nothing else: anything longer or shorter is not the router's answer.
    if (!isHexBytes(raw) || raw.length !== 66) throw new NoFirmAmount('node_garbage', 'the node answered garbage');
    return { grossOut: BigInt(raw), blockNumber: head.number };
  };

  return async (req) => {
    const chain = opts.chains.get(req.chainId);
    let timer: NodeJS.Timeout | undefined;
    try {
      if (!chain) throw new NoFirmAmount('unconfigured', 'firm quotes are not configured for this chain');
      const deadline = Date.now() + opts.deadlineMs;
      // The deadline covers every step, a stalled Redis or quoter module included.
      const expiry = new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new NoFirmAmount('timeout', `no answer within ${opts.deadlineMs} ms`)),
          opts.deadlineMs,
        );
      });
      const result = await Promise.race([quote(req, chain, deadline), expiry]);
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
      // The quoter key failed (its module is down): the same outage for the integrator.
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
