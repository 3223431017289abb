/**
 * The head of each chain's served book: the block number, hash and time of the book the
 * gateway answers `GET /v2/price` with (`pmm:{<id>}:book`, written by the indexer with its
 * block number and hash in side keys, all in one script: indexer book-store.ts). A firm quote
 * is pinned to this block, so it is never older than the book an integrator sees.
 *
 * One MULTI per read (the three keys share the chain's hash tag; the write is atomic, so the
 * read sees one book's head): the hash key, and only the first bytes of the book's body, whose
 * first members are `chainId`, `blockNumber` and `blockTime` (the indexer writes them first).
 * Not cached: a cached head could lag the book the gateway already serves. The firm quotes of
 * one chain asked in the same turn of the event loop share one read, sent once that turn's
 * requests are all in (at setImmediate): so every quote still reads a head read after its own
 * request arrived, and at the knee the signer writes one Redis command per turn, not one per
 * quote (it was most of the signer's Redis writes: docs/decisions/0071-past-capacity-a-fast-no.md).
 */
import { bookHashKey, type RedisClient, type RedisKeys } from '@pmm/core';

export interface BookHead {
  number: number;
  /** `0x` and 32 bytes of hex. */
  hash: string;
  /** Unix seconds of the block. */
  time: number;
}

/** Bytes of the body read: the three leading members fit with room to spare. */
const HEAD_BYTES = 160;
const HEAD = /^\{"chainId":(\d{1,10}),"blockNumber":(\d{1,16}),"blockTime":(\d{1,12}),/;

/** Parses a head from the body's first bytes and the hash key; null when either is not there or not well formed. */
export function parseBookHead(chainId: number, bodyStart: string | null, hash: string | null): BookHead | null {
  const m = bodyStart === null ? null : HEAD.exec(bodyStart);
  if (!m || Number(m[1]) !== chainId) return null;
  if (hash === null || !/^0x[0-9a-fA-F]{64}$/.test(hash)) return null;
  const number = Number(m[2]);
  const time = Number(m[3]);
  if (!Number.isSafeInteger(number) || !Number.isSafeInteger(time)) return null;
  return { number, hash, time };
}

/**
 * Reads a chain's book head (null: no book, or one without a hash); rejects when Redis fails.
 * The calls for one chain in the same turn share one read, sent at the end of that turn.
 */
export function bookHeadReader(redis: RedisClient, keys: RedisKeys): (chainId: number) => Promise<BookHead | null> {
  const read = readBookHead(redis, keys);
  // Per chain, the read this turn's calls share, until it is sent.
  const gathering = new Map<number, Promise<BookHead | null>>();
  return (chainId) => {
    let shared = gathering.get(chainId);
    if (!shared) {
      shared = new Promise<void>((resolve) => setImmediate(resolve)).then(() => {
        // Sent now: a call from here on waits for a read of its own, sent after it.
        gathering.delete(chainId);
        return read(chainId);
      });
      gathering.set(chainId, shared);
    }
    return shared;
  };
}

function readBookHead(redis: RedisClient, keys: RedisKeys): (chainId: number) => Promise<BookHead | null> {
  return async (chainId) => {
    const book = keys.book(chainId);
    const results = await redis
      .multi()
      .getrange(book, 0, HEAD_BYTES - 1)
      .get(bookHashKey(book))
      .exec();
    if (!results) throw new Error('book head: transaction aborted');
    const [[bodyErr, bodyStart], [hashErr, hash]] = results as [
      [Error | null, string | null],
      [Error | null, string | null],
    ];
    if (bodyErr || hashErr) throw bodyErr ?? hashErr;
    // GETRANGE of a missing key is '' (not null).
    return parseBookHead(chainId, bodyStart || null, hash);
  };
}
