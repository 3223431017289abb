/**
 * For tests that run no indexer: the chain's latest block published as the served book's head,
 * as the indexer writes it (the body's leading members and the hash side key; no pairs), so
 * that the signer's firm quotes (signs with amountIn) are pinned to a real block of the devnet.
 * No expiry: the devnet keeps every block's state, and the test decides when the book moves.
 * Each pair with a reference (the stack's `references`) gets a standing in band beside it, as an
 * indexer writes after a block where the curve agrees with its feed: the signer refuses a pair
 * with a reference and no standing.
 */
import {
  bookBandKey,
  bookBlockKey,
  bookHashKey,
  encodeBandRecord,
  type PairBandState,
  type RedisClient,
  type RedisKeys,
} from '@pmm/core';
import { createPublicClient, http } from 'viem';

/** Publishes the latest block of the node at `rpcUrl` as chain `chainId`'s book; resolves with that block. */
export async function publishBookHead(
  redis: RedisClient,
  keys: RedisKeys,
  chain: { chainId: number; rpcUrl: string; references?: Readonly<Record<string, unknown>> },
): Promise<{ number: number; hash: string; timestamp: number }> {
  const block = await createPublicClient({ transport: http(chain.rpcUrl, { retryCount: 0 }) }).getBlock();
  const book = keys.book(chain.chainId);
  const number = Number(block.number);
  const body = JSON.stringify({
    chainId: chain.chainId,
    blockNumber: number,
    blockTime: Number(block.timestamp),
    pairs: [],
  });
  const time = Number(block.timestamp);
  const inBand: PairBandState = {
    status: 'in_band',
    mode: 'enforce',
    withheld: false,
    served: true,
    streak: 0,
    since: number,
    maxDeviationBelowBps: 10_000,
    maxDeviationAboveBps: 10_000,
  };
  const pairs = Object.fromEntries(Object.keys(chain.references ?? {}).map((base) => [base.toLowerCase(), inBand]));
  const band = encodeBandRecord({ block: number, time, pairs });
  await redis.mset(
    book,
    body,
    bookBlockKey(book),
    String(number),
    bookHashKey(book),
    block.hash,
    bookBandKey(book),
    band,
  );
  return { number, hash: block.hash, timestamp: Number(block.timestamp) };
}
