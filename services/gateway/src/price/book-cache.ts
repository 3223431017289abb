/**
 * The orderbooks as the indexer stored them (`<prefix>:{<chainId>}:book`), with a short
 * in-process cache so that `GET /v2/price` rarely waits for Redis.
 *
 * INVARIANTS
 * - The bytes are the stored string, untouched (`v2`); the legacy body (`v1`) is derived
 *   from it once per entry.
 * - An entry is served only until `readStartedAt + ttlMs` (ttlMs ≤ 1000): every read that
 *   starts after the key disappears sees it gone, so a deleted or expired book is served for
 *   at most `ttlMs` after it left Redis. The `book-updated` channel only makes new books
 *   visible sooner; correctness never depends on receiving it (messages are lost while the
 *   subscriber reconnects).
 * - A read that started before an update notice is not cached (a generation counter per
 *   chain), so an older book cannot overwrite the notice's effect.
 * - Entries are refreshed ahead of expiry in the background, so the hot path does not wait
 *   for Redis while a chain is live.
 * - Watchers (the price stream) hear of every read that is current (same generation as the
 *   latest notice); while a chain has watchers, a notice starts that read at once, so one
 *   subscription and one read per notice serve every stream of this gateway.
 */
import { ChainUpdates, redisKeys, type ChainUpdate, type Logger, type RedisClient } from '@pmm/core';

export interface BookEntry {
  /** The exact bytes of the stored `GET /v2/price` body. */
  v2: Buffer;
  blockNumber: number;
  /** Unix seconds of the book's block (0 when the stored body does not say). */
  blockTime: number;
  /** The legacy `/v1/price` body (the same book without `chainId`), computed on first use. */
  v1(): Buffer;
}

interface Slot {
  entry: BookEntry | null;
  expiresAt: number;
  refreshAt: number;
}

/** Called with the chain's book (null: none in Redis) after a current read. */
export type BookWatcher = (entry: BookEntry | null) => void;

const HEAD_RE = /^\{"chainId":[0-9]+,/;

/**
 * The v1 body from a v2 body: the same JSON without `chainId`. The indexer writes `chainId`
 * first, so the common case is a byte-level cut that keeps every other byte as stored; any
 * other layout goes through JSON (same content, canonical formatting).
 */
export function v1BodyFromV2(v2: string): string {
  if (HEAD_RE.test(v2)) return `{${v2.slice(v2.indexOf(',') + 1)}`;
  const parsed = JSON.parse(v2) as Record<string, unknown>;
  delete parsed.chainId;
  return JSON.stringify(parsed);
}

function numberField(text: string, name: string): number {
  const m = new RegExp(`"${name}":([0-9]+)`).exec(text);
  return m ? Number(m[1]) : 0;
}

function makeEntry(text: string): BookEntry {
  let v1: Buffer | undefined;
  return {
    v2: Buffer.from(text, 'utf8'),
    blockNumber: numberField(text, 'blockNumber'),
    blockTime: numberField(text, 'blockTime'),
    v1: () => (v1 ??= Buffer.from(v1BodyFromV2(text), 'utf8')),
  };
}

export interface BookCacheOptions {
  redis: RedisClient;
  /** A connection in subscriber mode for `book-updated`; without it only the ttl applies. */
  subscriber?: RedisClient;
  prefix: string;
  chains: readonly number[];
  /** Cache life, ≤ 1000 ms; 0 disables the cache (every request reads Redis). */
  ttlMs: number;
  logger?: Logger;
  now?: () => number;
}

export class BookCache {
  private readonly keys: ReturnType<typeof redisKeys>;
  private readonly slots = new Map<number, Slot>();
  private readonly generation = new Map<number, number>();
  private readonly inflight = new Map<number, Promise<BookEntry | null>>();
  private readonly watchers = new Map<number, Set<BookWatcher>>();
  private readonly updates: ChainUpdates | undefined;
  private readonly now: () => number;
  private readonly onUpdate = ({ type, chainId }: ChainUpdate) => {
    // A new pair registry changes no book.
    if (type === 'book') this.invalidate(chainId);
  };

  private invalidate(chainId: number): void {
    this.generation.set(chainId, (this.generation.get(chainId) ?? 0) + 1);
    this.slots.delete(chainId);
    // A read already running may predate the notice: later requests start their own.
    this.inflight.delete(chainId);
    if (this.watchers.get(chainId)?.size) this.read(chainId).catch(() => undefined);
  }

  constructor(private readonly opts: BookCacheOptions) {
    if (opts.ttlMs > 1_000) throw new Error('book cache ttl must be at most 1000 ms');
    this.keys = redisKeys(opts.prefix);
    this.now = opts.now ?? Date.now;
    // While the subscriber is down, notices are lost: the ttl still bounds staleness, and
    // dropping the cache on reconnect makes the first reads after it fresh.
    this.updates = opts.subscriber
      ? new ChainUpdates({
          subscriber: opts.subscriber,
          keys: this.keys,
          chains: opts.chains,
          onUpdate: this.onUpdate,
          onReconnect: () => this.dropAll(),
        })
      : undefined;
  }

  /** Subscribes to the chains' update channels (resolves once subscribed, or at once without a subscriber). */
  async start(): Promise<void> {
    await this.updates?.start();
  }

  /** Unsubscribes (the caller closes the connections). */
  async stop(): Promise<void> {
    await this.updates?.stop();
  }

  /**
   * Calls `watcher` with the chain's book after every current read (see the module comment);
   * returns the function that stops it. Watchers must not throw.
   */
  watch(chainId: number, watcher: BookWatcher): () => void {
    let set = this.watchers.get(chainId);
    if (!set) this.watchers.set(chainId, (set = new Set()));
    set.add(watcher);
    return () => {
      set.delete(watcher);
    };
  }

  private dropAll(): void {
    for (const chainId of this.opts.chains) this.invalidate(chainId);
  }

  /**
   * The chain's book, or null when Redis has none. Synchronous on a cache hit (no promise on
   * the hot path); rejects when Redis cannot be reached.
   */
  get(chainId: number): BookEntry | null | Promise<BookEntry | null> {
    const slot = this.slots.get(chainId);
    const now = this.now();
    if (slot && slot.expiresAt > now) {
      if (slot.refreshAt <= now && !this.inflight.has(chainId)) this.read(chainId).catch(() => undefined);
      return slot.entry;
    }
    return this.inflight.get(chainId) ?? this.read(chainId);
  }

  private read(chainId: number): Promise<BookEntry | null> {
    const startedAt = this.now();
    const gen = this.generation.get(chainId) ?? 0;
    const settle = () => {
      if (this.inflight.get(chainId) === p) this.inflight.delete(chainId);
    };
    const p: Promise<BookEntry | null> = this.opts.redis.get(this.keys.book(chainId)).then(
      (text) => {
        settle();
        const entry = text === null ? null : makeEntry(text);
        const fresh = (this.generation.get(chainId) ?? 0) === gen;
        if (this.opts.ttlMs > 0 && fresh) {
          const current = this.slots.get(chainId);
          // Keep a newer entry if a later read already landed (reads can complete out of order).
          if (!current || current.expiresAt <= startedAt + this.opts.ttlMs) {
            this.slots.set(chainId, {
              entry,
              expiresAt: startedAt + this.opts.ttlMs,
              refreshAt: startedAt + this.opts.ttlMs / 2,
            });
          }
        }
        if (fresh) for (const watcher of this.watchers.get(chainId) ?? []) watcher(entry);
        return entry;
      },
      (err: unknown) => {
        settle();
        throw err;
      },
    );
    this.inflight.set(chainId, p);
    return p;
  }
}
