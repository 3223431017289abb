/**
 * Fans every chain's books out to the open `/v2/price/stream` connections of this gateway,
 * and to in-process observers (the operator console's feed, console/console-feed.ts), which
 * hear the same books and the same `unavailable` moments under the same rules.
 *
 * Source of books: the gateway's BookCache (one `book-updated` subscription and one Redis
 * read per notice, whatever the number of streams; see price/book-cache.ts), plus, while a
 * chain has streams, a check every {@link CHECK_MS} through the same cache: the indexer's
 * book can also vanish without a notice (it expires), and that must reach the streams too.
 *
 * INVARIANTS
 * - A stream never receives a block older than the last one it received (or than its
 *   `Last-Event-ID`); it receives the same block again only right after an `unavailable`.
 * - An event's bytes (with their HTTP chunk framing) are built once per book and shared by
 *   every stream; each stream gets them with one socket write (see stream-writer.ts).
 * - A stream holds at most ONE undelivered event of ours: when a write reports a full
 *   buffer, later events replace the waiting one until 'drain' (a slow client skips to the
 *   latest book); nothing grows with the number of books it cannot take.
 */
import type { ServerResponse } from 'node:http';
import { ApiError, toErrorEnvelope, type ErrorCode } from '@pmm/protocol';
import type { BookCache, BookEntry } from '../price/book-cache';
import { offeredBook, type HaltSource } from '../price/halted-book';
import { SSE_KEEPALIVE, sseEvent } from './sse-event';
import { StreamPayload, streamWriter, type StreamWriter } from './stream-writer';

/** How often a chain with streams is re-read to notice a book that expired without a notice. */
export const CHECK_MS = 1_000;

export interface StreamMetrics {
  opened(chainId: number): void;
  closed(chainId: number): void;
  sent(event: 'book' | 'unavailable'): void;
  skipped(): void;
  /** Seconds spent writing one book to every stream of its chain. */
  fanout(chainId: number, seconds: number): void;
}

interface Subscriber {
  res: ServerResponse;
  writer: StreamWriter;
  requestId: string;
  /** Last block sent, or the client's Last-Event-ID; -1 for none. */
  lastId: number;
  /** The last event sent was `unavailable`. */
  gone: boolean;
  /** `res.write()` returned false: waiting for 'drain'. */
  blocked: boolean;
  /** The latest event that arrived while blocked. */
  pending?: Outgoing;
}

interface Outgoing {
  payload: StreamPayload;
  /** Counted in the metrics once written; undefined for the keep-alive comment. */
  kind?: 'book' | 'unavailable';
}

/** Hears a chain's book (null: the chain has none, or the store is unreachable). Must not throw. */
export type BookObserver = (entry: BookEntry | null) => void;

interface Observer {
  notify: BookObserver;
  /** As a Subscriber's: the last block it heard, and whether it last heard `unavailable`. */
  lastId: number;
  gone: boolean;
}

interface ChainState {
  subscribers: Set<Subscriber>;
  observers: Set<Observer>;
  /** The newest book seen, with its event bytes. */
  book?: { blockNumber: number; event: StreamPayload };
  /** Whether that book is still live. */
  live: boolean;
  stopWatching: () => void;
}

const KEEPALIVE = new StreamPayload(SSE_KEEPALIVE);

export class StreamHub {
  private readonly chains = new Map<number, ChainState>();
  private readonly heartbeat: NodeJS.Timeout;
  private readonly check: NodeJS.Timeout;
  private closed = false;

  constructor(
    private readonly books: BookCache,
    private readonly metrics: StreamMetrics,
    heartbeatMs: number,
    /** The operator's halts: a halted chain's streams get `unavailable`, a halted pair's levels are left out. */
    private readonly halts: HaltSource = { current: () => [] },
  ) {
    this.heartbeat = setInterval(() => this.keepAlive(), heartbeatMs);
    this.heartbeat.unref();
    this.check = setInterval(() => {
      for (const chainId of this.chains.keys()) this.refresh(chainId);
    }, CHECK_MS);
    this.check.unref();
  }

  /** Open streams (all chains). */
  get size(): number {
    let n = 0;
    for (const c of this.chains.values()) n += c.subscribers.size;
    return n;
  }

  /**
   * Adds a stream whose headers are sent; it gets the current book at once (if newer than
   * `lastEventId`), then every newer one. `onClose` runs once when the stream ends either way.
   */
  attach(
    chainId: number,
    res: ServerResponse,
    opts: { requestId: string; lastEventId?: number; onClose: () => void },
  ): void {
    if (this.closed) {
      res.end();
      opts.onClose();
      return;
    }
    const sub: Subscriber = {
      res,
      writer: streamWriter(res),
      requestId: opts.requestId,
      lastId: opts.lastEventId ?? -1,
      gone: false,
      blocked: false,
    };
    const state = this.chainState(chainId);
    state.subscribers.add(sub);
    this.metrics.opened(chainId);
    res.once('close', () => {
      state.subscribers.delete(sub);
      this.metrics.closed(chainId);
      this.release(chainId, state);
      opts.onClose();
    });
    this.refresh(chainId);
  }

  /**
   * Calls `notify` with the chain's current book (or null) as soon as it is known, then on
   * every newer book and whenever the book goes; returns the function that stops it.
   */
  observe(chainId: number, notify: BookObserver): () => void {
    const state = this.chainState(chainId);
    const observer: Observer = { notify, lastId: -1, gone: false };
    state.observers.add(observer);
    this.refresh(chainId);
    return () => {
      if (state.observers.delete(observer)) this.release(chainId, state);
    };
  }

  private chainState(chainId: number): ChainState {
    let chain = this.chains.get(chainId);
    if (!chain) {
      const state: ChainState = {
        subscribers: new Set(),
        observers: new Set(),
        live: false,
        stopWatching: () => undefined,
      };
      state.stopWatching = this.books.watch(chainId, (entry) => this.update(chainId, entry));
      this.chains.set(chainId, (chain = state));
    }
    return chain;
  }

  /** Stops watching a chain nobody listens to any more. */
  private release(chainId: number, state: ChainState): void {
    if (state.subscribers.size === 0 && state.observers.size === 0 && this.chains.get(chainId) === state) {
      state.stopWatching();
      this.chains.delete(chainId);
    }
  }

  /** Ends every stream (graceful shutdown) and refuses new ones. */
  close(): void {
    this.closed = true;
    clearInterval(this.heartbeat);
    clearInterval(this.check);
    for (const chain of this.chains.values()) for (const sub of chain.subscribers) sub.res.end();
  }

  /**
   * Reads the chain's book through the cache and delivers what changed. A cached entry is
   * delivered here; a Redis read reports to the watcher (BookCache.watch), which hears only
   * reads that no later notice has made stale, so only its failure is handled here.
   */
  private refresh(chainId: number): void {
    const found = this.books.get(chainId);
    if (found instanceof Promise) found.catch(() => this.unreachable(chainId));
    else this.update(chainId, found);
  }

  private update(chainId: number, stored: BookEntry | null): void {
    const chain = this.chains.get(chainId);
    if (!chain) return;
    if (stored === null) return this.unavailable(chain, chainId, 'has no live orderbook, retry shortly');
    let entry: BookEntry;
    try {
      // The halts naming no integrator (one event for every stream); an integrator's own halt is checked as its stream opens.
      entry = offeredBook(this.halts, chainId, '', stored);
    } catch (err) {
      const refused = err instanceof ApiError ? err : new ApiError('SERVICE_UNAVAILABLE', 'retry shortly');
      return this.unavailable(chain, chainId, refused.message, true, refused.code);
    }
    const book = chain.book;
    // Reads can land out of order; a live chain never moves back (a stale read is dropped).
    if (chain.live && book && entry.blockNumber < book.blockNumber) return;
    // The event bytes are built once per block (a re-read of the same block reuses them).
    if (book?.blockNumber !== entry.blockNumber) {
      chain.book = {
        blockNumber: entry.blockNumber,
        event: new StreamPayload(sseEvent('book', entry.v2, entry.blockNumber)),
      };
    }
    chain.live = true;
    const { blockNumber, event } = chain.book!;
    const started = process.hrtime.bigint();
    let sent = 0;
    for (const sub of chain.subscribers) {
      if (blockNumber > sub.lastId || (sub.gone && blockNumber === sub.lastId)) {
        sub.lastId = blockNumber;
        sub.gone = false;
        this.send(sub, { payload: event, kind: 'book' });
        sent++;
      }
    }
    if (sent > 0) this.metrics.fanout(chainId, Number(process.hrtime.bigint() - started) / 1e9);
    for (const observer of chain.observers) {
      if (blockNumber > observer.lastId || (observer.gone && blockNumber === observer.lastId)) {
        observer.lastId = blockNumber;
        observer.gone = false;
        observer.notify(entry);
      }
    }
  }

  private unreachable(chainId: number): void {
    const chain = this.chains.get(chainId);
    if (chain) this.unavailable(chain, chainId, 'orderbook store unreachable, retry shortly', true);
  }

  private unavailable(
    chain: ChainState,
    chainId: number,
    reason: string,
    storeDown = false,
    code: ErrorCode = 'SERVICE_UNAVAILABLE',
  ): void {
    chain.live = false;
    for (const observer of chain.observers) {
      if (observer.gone) continue;
      observer.gone = true;
      observer.notify(null);
    }
    const message = storeDown ? reason : `chainId: ${chainId} ${reason}`;
    for (const sub of chain.subscribers) {
      if (sub.gone) continue;
      sub.gone = true;
      const { body } = toErrorEnvelope(new ApiError(code, message), sub.requestId);
      this.send(sub, {
        payload: new StreamPayload(sseEvent('unavailable', JSON.stringify(body))),
        kind: 'unavailable',
      });
    }
  }

  private send(sub: Subscriber, out: Outgoing): void {
    if (sub.res.writableEnded || sub.res.destroyed) return;
    if (sub.blocked) {
      // Only events get here: keepAlive() skips blocked streams.
      if (sub.pending?.kind === 'book') this.metrics.skipped();
      sub.pending = out;
      return;
    }
    const ok = sub.writer.write(out.payload);
    if (out.kind) this.metrics.sent(out.kind);
    if (ok) return;
    sub.blocked = true;
    sub.writer.onceDrain(() => {
      sub.blocked = false;
      const next = sub.pending;
      sub.pending = undefined;
      if (next) this.send(sub, next);
    });
  }

  private keepAlive(): void {
    for (const chain of this.chains.values()) {
      // A blocked stream is not idle (the client is behind), and a comment would only queue.
      for (const sub of chain.subscribers) if (!sub.blocked) this.send(sub, { payload: KEEPALIVE });
    }
  }
}
