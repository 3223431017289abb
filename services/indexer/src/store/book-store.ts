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
 */
import { commandsDir, encodeChainUpdate, luaCommand, type RedisClient } from '@pmm/core';

const COMMANDS = commandsDir(__dirname, 2);

export interface BookStoreKeys {
  book: string;
  /** pub/sub channel of the chain's updates. */
  updates: string;
}

export interface BookStore {
  /**
   * Writes `body` as the book of `blockNumber` if no higher block is stored, then announces it.
   * Resolves true when written, false when a newer book was already there.
   */
  write(blockNumber: number, body: string): Promise<boolean>;
  /** The block number of the stored book, or null when there is none. */
  storedBlock(): Promise<number | null>;
  /**
   * Deletes the book unless a book of a block above `notAbove` is stored (written by a
   * replica that still reaches the node). Resolves true when something was deleted.
   */
  deleteIfNotAbove(notAbove: number): Promise<boolean>;
}

/** The side key holding the stored book's block number. */
export function bookBlockKey(bookKey: string): string {
  return `${bookKey}:block`;
}

export function createBookStore(
  redis: RedisClient,
  opts: { keys: BookStoreKeys; chainId: number; ttlMs: number },
): BookStore {
  const blockKey = bookBlockKey(opts.keys.book);
  const ttl = String(opts.ttlMs);
  const writeBook = luaCommand<number>(redis, COMMANDS, 'pmmBookWrite', 2);
  const deleteBook = luaCommand<number>(redis, COMMANDS, 'pmmBookDelete', 2);
  return {
    async write(blockNumber, body) {
      const message = encodeChainUpdate({ type: 'book', chainId: opts.chainId, blockNumber });
      return (
        (await writeBook(opts.keys.book, blockKey, String(blockNumber), body, ttl, opts.keys.updates, message)) === 1
      );
    },
    async storedBlock() {
      const raw = await redis.get(blockKey);
      return raw === null ? null : Number(raw);
    },
    async deleteIfNotAbove(notAbove) {
      return (await deleteBook(opts.keys.book, blockKey, String(notAbove))) > 0;
    },
  };
}
