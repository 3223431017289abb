/**
 * What the halts leave of a book (docs/api-refusals.md#halts): a book a halt covers whole (everything, its
 * chain, the asking integrator) is not offered, 503 HALTED; a halted pair's levels are taken out
 * (the pair is left out of `pairs`), the rest served as stored. While the halts cannot be read,
 * no book is offered (503 SERVICE_UNAVAILABLE): a halted pair must not show because Redis stalled.
 *
 * Hot path: with no halt, the entry is returned as it is; a filtered entry is built once per
 * book and set of halted pairs.
 */
import { ApiError, type OrderbookResponse } from '@pmm/protocol';
import { bookHalt, haltedError, type HaltRecord } from '@pmm/core';
import { v1BodyFromV2, type BookEntry } from './book-cache';

/** The active halts (core's HaltView). */
export interface HaltSource {
  current(): readonly HaltRecord[];
}

/**
 * Filtered entries per book, by set of halted pairs: several sets are asked for at once (the
 * stream's shared one, an integrator's own), and a single slot would rebuild them in turn.
 */
const filtered = new WeakMap<BookEntry, Map<string, BookEntry>>();
const NO_PAIRS: ReadonlySet<string> = new Set();

/** `entry` without the levels of `pairs` (base tokens, lower case). */
function withoutPairs(entry: BookEntry, pairs: ReadonlySet<string>): BookEntry {
  const key = [...pairs].sort().join(',');
  let memo = filtered.get(entry);
  const found = memo?.get(key);
  if (found) return found;
  const book = JSON.parse(entry.v2.toString('utf8')) as OrderbookResponse;
  book.pairs = book.pairs.filter((p) => !pairs.has(p.baseToken.toLowerCase()));
  const text = JSON.stringify(book);
  let v1: Buffer | undefined;
  const out: BookEntry = {
    v2: Buffer.from(text, 'utf8'),
    blockNumber: entry.blockNumber,
    blockTime: entry.blockTime,
    v1: () => (v1 ??= Buffer.from(v1BodyFromV2(text), 'utf8')),
  };
  if (!memo) filtered.set(entry, (memo = new Map()));
  memo.set(key, out);
  return out;
}

function shownOf(halts: HaltSource, chainId: number, integratorId: string): ReadonlySet<string> {
  let active: readonly HaltRecord[];
  try {
    active = halts.current();
  } catch (err) {
    throw new ApiError(
      'SERVICE_UNAVAILABLE',
      'the orderbook is withheld for a moment; retry shortly',
      {},
      { cause: err },
    );
  }
  if (active.length === 0) return NO_PAIRS;
  const shown = bookHalt(active, chainId, integratorId);
  if ('refusedBy' in shown) throw haltedError(shown.refusedBy);
  return shown.pairs;
}

/** Throws 503 SERVICE_UNAVAILABLE when the halts are unreadable, 503 HALTED when one covers the whole book. */
export function assertBookOffered(halts: HaltSource, chainId: number, integratorId: string): void {
  shownOf(halts, chainId, integratorId);
}

/**
 * The book as offered to `integratorId` ('' for every integrator at once: the price stream's
 * shared events, which only the halts naming no integrator touch); throws as assertBookOffered.
 */
export function offeredBook(halts: HaltSource, chainId: number, integratorId: string, entry: BookEntry): BookEntry {
  const pairs = shownOf(halts, chainId, integratorId);
  return pairs.size > 0 ? withoutPairs(entry, pairs) : entry;
}
