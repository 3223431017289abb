/**
 * The chain's book in Redis (`pmm:{<id>}:book`, the exact `GET /v2/price` body).
 *
 * INVARIANT: the book never moves backwards. A write is a Lua compare-and-set on the block
 * number, which lives in a small side key (`pmm:{<id>}:book:block`, same hash tag, same TTL)
 * so the script never parses the body: SET only if the stored number is not higher, both
 * keys with PX = staleness, then PUBLISH the update, atomically (commands/pmmBookWrite.lua). Replicas and re-run jobs
 * may therefore write in any order; the result is the same.
 *
 * Both keys expire together, so once a book has gone stale nothing is left to compare with,
 * and a restarted chain (block numbers from 0 again) is accepted after one staleness period.
 *
 * The block's hash lives in a third side key (`pmm:{<id>}:book:hash`): a book of the same
 * height with ANOTHER hash (a reorg) replaces the stored one; with the same hash it is a
 * duplicate. Each write carries its own expiry, which the caller bounds by the block's age
 * (jobs/block-processor.ts): a book never outlives MAX_HEAD_LAG_MS past its block's time.
 *
 * A fourth side key (`pmm:{<id>}:book:band`) holds each pair's standing against its reference at
 * that book (core's band-record.ts), written and expiring with it: the next block's band reads it,
 * and so does the signer. A fifth (`pmm:{<id>}:book:band:log`, a stream) keeps each pair's
 * transitions in and out of band (core's band-transition.ts), added by the same script with the
 * book that shows them, trimmed to BAND_LOG_MAX_ENTRIES, never expiring: `risk history` reads it.
 */
import {
  BAND_LOG_FIELD,
  BAND_LOG_MAX_ENTRIES,
  bookBandKey,
  bookBandLogKey,
  bookBlockKey,
  bookHashKey,
  commandsDir,
  encodeChainUpdate,
  luaCommand,
  type RedisClient,
} from '@pmm/core';

const COMMANDS = commandsDir(__dirname, 2);

export interface BookStoreKeys {
  book: string;
  /** pub/sub channel of the chain's updates. */
  updates: string;
}

export interface BookStore {
  /** A book's life after a write when the writer does not say (BOOK_TTL_MS). */
  readonly ttlMs: number;
  /**
   * Writes `body` as the book of block `blockNumber` (with `hash`) if no higher block, nor
   * this very block, is stored, expiring after `ttlMs` (default: the store's), then announces
   * it. Resolves true when written, false when a newer book was already there.
   */
  write(
    blockNumber: number,
    body: string,
    options?: { hash?: string; ttlMs?: number; band?: string; transitions?: readonly string[] },
  ): Promise<boolean>;
  /** The block of the stored book (and its pairs' standing), or null when there is none. */
  storedBlock(): Promise<StoredBlock | null>;
  /**
   * Deletes the book unless a book of a block above `notAbove` is stored (written by a
   * replica that still reaches the node). Resolves true when something was deleted.
   */
  deleteIfNotAbove(notAbove: number): Promise<boolean>;
}

/** Which block a stored book describes. */
export interface StoredBlock {
  number: number;
  hash: string;
  /** The standing written with it (core's band-record.ts), null when none. */
  band: string | null;
}

export function createBookStore(
  redis: RedisClient,
  opts: { keys: BookStoreKeys; chainId: number; ttlMs: number },
): BookStore {
  const blockKey = bookBlockKey(opts.keys.book);
  const hashKey = bookHashKey(opts.keys.book);
  const bandKey = bookBandKey(opts.keys.book);
  const bandLogKey = bookBandLogKey(opts.keys.book);
  const writeBook = luaCommand<number>(redis, COMMANDS, 'pmmBookWrite', 5);
  const deleteBook = luaCommand<number>(redis, COMMANDS, 'pmmBookDelete', 4);
  return {
    ttlMs: opts.ttlMs,
    async write(blockNumber, body, { hash = '', ttlMs = opts.ttlMs, band = '', transitions = [] } = {}) {
      const message = encodeChainUpdate({ type: 'book', chainId: opts.chainId, blockNumber });
      const args = [String(blockNumber), body, String(ttlMs), opts.keys.updates, message, hash, band];
      const log = [String(BAND_LOG_MAX_ENTRIES), BAND_LOG_FIELD, ...transitions];
      return (await writeBook(opts.keys.book, blockKey, hashKey, bandKey, bandLogKey, ...args, ...log)) === 1;
    },
    async storedBlock() {
      const [number, hash, band] = await redis.mget(blockKey, hashKey, bandKey);
      return number === null || number === undefined
        ? null
        : { number: Number(number), hash: hash ?? '', band: band ?? null };
    },
    async deleteIfNotAbove(notAbove) {
      return (await deleteBook(opts.keys.book, blockKey, hashKey, bandKey, String(notAbove))) > 0;
    },
  };
}
