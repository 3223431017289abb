/**
 * `GET /v2/price` and the legacy `GET /v1/price`: the chain's book as the indexer stored it.
 *
 * v2 (after auth and rate limit): any query parameter but `chainId` is 400 UNSUPPORTED_FIELD
 * naming it (a misspelt `chainid` must not silently get chain 8453's book); chainId per
 * docs/decisions/0003-chainid.md (422 malformed, 400 UNSUPPORTED_CHAIN for a well-formed id that is not served
 * or not enabled for the key, omitted/0 → 8453); the stored bytes, untouched; 503 when the
 * chain has no book.
 * v1: chain 8453 only, any query ignored (as documented for the earlier form), the same book without `chainId`, and before the
 * first book (no book in Redis) 200 with an empty book, as the earlier interface did.
 * Both: 503 when Redis cannot be reached (no answer at all is possible then); what the operator's
 * halts leave of the book (halted-book.ts: 503 HALTED for a halted chain, a halted pair's levels
 * left out).
 *
 * Hot path: no JSON work per request; the body is a Buffer prepared once per book.
 */
import { parse as parseQuery } from 'node:querystring';
import { ApiError, DEFAULT_CHAIN_ID, assertServedChain, chainIdFromQuery, type IntegratorRecord } from '@pmm/protocol';
import { attempt, JSON_TYPE, queryOf, sendBytes, type MaybePromise, type Step } from '@pmm/core';
import type { BookCache, BookEntry } from './book-cache';
import { authOf } from '../keys/auth-context';
import { offeredBook, type HaltSource } from './halted-book';

/** The `/v1/price` body before the first book: what the earlier interface answered. */
export const V1_EMPTY_BOOK = Buffer.from('{"blockNumber":0,"blockTime":0,"pairs":[]}', 'utf8');

const BOOK_HEADERS = { 'Content-Type': JSON_TYPE, 'Cache-Control': 'no-store' };

const unreachable = (cause: unknown) =>
  new ApiError('SERVICE_UNAVAILABLE', 'orderbook store unreachable, retry shortly', {}, { cause });

/** Whether the key's integrator may use `chainId` (an empty list enables every chain). */
function chainEnabled(chains: readonly number[], chainId: number): boolean {
  return chains.length === 0 || chains.includes(chainId);
}

/** Throws UNSUPPORTED_CHAIN when the key's integrator may not use `chainId`. */
export function assertChainEnabled(chains: readonly number[], chainId: number): void {
  if (!chainEnabled(chains, chainId)) {
    throw new ApiError('UNSUPPORTED_CHAIN', `chainId: ${chainId} is not enabled for this API key`);
  }
}

function read(books: BookCache, chainId: number, use: (entry: BookEntry | null) => Buffer): MaybePromise<Buffer> {
  const found = books.get(chainId);
  if (!(found instanceof Promise)) return use(found);
  return found.then(use, (err: unknown) => {
    throw unreachable(err);
  });
}

/** The query parameters of `/v2/price`. */
const PRICE_QUERY = new Set(['chainId']);

/** Throws UNSUPPORTED_FIELD for the first query parameter that `/v2/price` does not define. */
function assertKnownQuery(query: Record<string, unknown>): void {
  for (const name of Object.keys(query)) {
    if (!PRICE_QUERY.has(name)) {
      const shown = name.length > 64 ? `${name.slice(0, 64)}…` : name;
      throw new ApiError('UNSUPPORTED_FIELD', `${shown}: unsupported query parameter (only chainId is defined)`);
    }
  }
}

/**
 * The chain a `/v2/price` or `/v2/price/stream` query asks for, checked in the routes' order:
 * unknown parameter 400, malformed chainId 422, not served or not enabled for the key 400.
 * `query` is node:querystring's shape (undefined when the URL has none).
 */
export function priceChainOf(
  served: readonly number[],
  integrator: IntegratorRecord,
  query: Record<string, unknown> | undefined,
): number {
  if (query) assertKnownQuery(query);
  const chainId = chainIdFromQuery(query?.chainId);
  assertServedChain(chainId, served);
  assertChainEnabled(integrator.chains, chainId);
  return chainId;
}

/** The `/v2/price` body for the parsed query string, or a thrown/rejected ApiError. */
export function v2PriceBody(
  books: BookCache,
  served: readonly number[],
  integrator: IntegratorRecord,
  query: Record<string, unknown> | undefined,
  halts: HaltSource,
): MaybePromise<Buffer> {
  const chainId = priceChainOf(served, integrator, query);
  return read(books, chainId, (entry) => {
    if (!entry)
      throw new ApiError('SERVICE_UNAVAILABLE', `chainId: ${chainId} has no live orderbook yet, retry shortly`);
    return offeredBook(halts, chainId, integrator.id, entry).v2;
  });
}

/** The `/v1/price` body, or a thrown/rejected ApiError. Only when chain 8453 is served. */
export function v1PriceBody(books: BookCache, integrator: IntegratorRecord, halts: HaltSource): MaybePromise<Buffer> {
  // v1 has no UNSUPPORTED_CHAIN: a key without chain 8453 has no access to the only chain of v1.
  if (!chainEnabled(integrator.chains, DEFAULT_CHAIN_ID)) {
    throw new ApiError(
      'UNAUTHORIZED',
      `X-API-KEY: this API key is not enabled for chain ${DEFAULT_CHAIN_ID}, the only chain of /v1`,
    );
  }
  // A stored book that is not JSON makes v1() throw: 500, logged.
  return read(books, DEFAULT_CHAIN_ID, (entry) =>
    entry ? offeredBook(halts, DEFAULT_CHAIN_ID, integrator.id, entry).v1() : V1_EMPTY_BOOK,
  );
}

/** The last step of `GET /v2/price` (after the key and the limit). */
export function priceV2Step(books: BookCache, servedChains: readonly number[], halts: HaltSource): Step {
  return (req, res, next) => {
    const query = queryOf(req);
    attempt(
      // Express's "simple" query semantics (node:querystring).
      () =>
        v2PriceBody(
          books,
          servedChains,
          authOf(res).integrator,
          query === undefined ? undefined : parseQuery(query),
          halts,
        ),
      next,
      (body) => sendBytes(res, 200, body, BOOK_HEADERS),
    );
  };
}

/** The last step of `GET /v1/price`; the route exists only when chain 8453 is served (else 404). */
export function priceV1Step(books: BookCache, halts: HaltSource): Step {
  return (_req, res, next) =>
    attempt(
      () => v1PriceBody(books, authOf(res).integrator, halts),
      next,
      (body) => sendBytes(res, 200, body, BOOK_HEADERS),
    );
}
