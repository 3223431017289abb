/**
 * Each chain's pairs' standing against their references, as the indexer publishes it with every
 * book (`pmm:{<id>}:book:band`, core's band-record.ts): what the sign path checks, synchronously,
 * before it signs for a pair that has a reference.
 *
 * Freshness, as the halts' (core's halt-view.ts) and no looser than the book's:
 * - each book's notice on the chain's `book-updated` channel re-reads that chain at once (the
 *   standing is written in the book's own script, before the notice);
 * - a re-read every `refreshMs` (default 200 ms), and after every (re)connection: pub/sub keeps no
 *   backlog;
 * - INVARIANT: a standing is relied on only while its read STARTED less than `maxAgeMs` (default
 *   STANDING_MAX_AGE_MS) ago, and never past the key's own expiry (the book's): an expired or unread standing
 *   is never taken for "in band". A pair with a reference (the chains setting's `references`, which
 *   the indexer reads too) and no fresh standing is refused (fail closed).
 */
import {
  bookBandKey,
  ChainUpdates,
  decodeBandRecord,
  type BandRecord,
  type ChainDeployments,
  type ChainUpdate,
  type Logger,
  type PairBandState,
  type RedisClient,
  type RedisKeys,
} from '@pmm/core';

/** No standing recent enough to rely on for a pair that has a reference. */
export class StandingUnknown extends Error {}

/**
 * How long a standing's read is relied on (the INVARIANT above): the most the sign path can lag
 * behind a book that withholds a pair. In practice it follows at the book's notice, one read later.
 */
export const STANDING_MAX_AGE_MS = 800;

export interface ReferenceStandingsOptions {
  /** Command connection (GET and PTTL of the standing). */
  redis: RedisClient;
  /** A connection in subscriber mode (may be shared; the caller closes it). */
  subscriber: RedisClient;
  keys: RedisKeys;
  chains: readonly number[];
  /** The chains setting: which pairs have a reference. */
  deployments: ChainDeployments;
  logger?: Logger;
  refreshMs?: number;
  maxAgeMs?: number;
  now?: () => number;
}

interface Slot {
  record: BandRecord | undefined;
  /** Until when the slot may be relied on (ms): the read's start + maxAgeMs, bounded by the key's expiry. */
  until: number;
}

export class ReferenceStandings {
  private readonly slots = new Map<number, Slot>();
  private readonly reading = new Map<number, Promise<void>>();
  private readonly again = new Set<number>();
  private readonly referenced: ReadonlyMap<number, ReadonlySet<string>>;
  private readonly updates: ChainUpdates;
  private readonly now: () => number;
  private readonly maxAgeMs: number;
  private timer: NodeJS.Timeout | undefined;
  private failing = false;
  private readonly onReady = () => this.refreshAll();

  constructor(private readonly opts: ReferenceStandingsOptions) {
    this.now = opts.now ?? Date.now;
    this.maxAgeMs = opts.maxAgeMs ?? STANDING_MAX_AGE_MS;
    this.referenced = new Map(
      opts.chains.map((id) => [
        id,
        new Set(Object.keys(opts.deployments[id]?.references ?? {}).map((a) => a.toLowerCase())),
      ]),
    );
    this.updates = new ChainUpdates({
      subscriber: opts.subscriber,
      keys: opts.keys,
      chains: opts.chains.filter((id) => this.referenced.get(id)!.size > 0),
      onUpdate: ({ type, chainId }: ChainUpdate) => {
        if (type === 'book') void this.refresh(chainId);
      },
      onReconnect: this.onReady,
    });
  }

  /** Whether any served chain has a pair with a reference (else nothing is read). */
  get active(): boolean {
    return [...this.referenced.values()].some((set) => set.size > 0);
  }

  /** Subscribes, starts the re-reads and reads once. Never rejects. */
  async start(): Promise<void> {
    if (!this.active) return;
    this.opts.redis.on('ready', this.onReady);
    this.updates.start().catch(() => undefined);
    this.timer = setInterval(this.onReady, this.opts.refreshMs ?? 200);
    this.timer.unref();
    await Promise.all(this.chainsRead().map((id) => this.refresh(id)));
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    this.opts.redis.off('ready', this.onReady);
    await this.updates.stop();
  }

  /**
   * The pair's standing (base token address, any case); undefined when the pair has no
   * reference. Throws StandingUnknown when it has one and no standing of it is fresh.
   */
  standing(chainId: number, base: string): PairBandState | undefined {
    const key = base.toLowerCase();
    if (!this.referenced.get(chainId)?.has(key)) return undefined;
    const slot = this.slots.get(chainId);
    if (!slot || this.now() >= slot.until) throw new StandingUnknown(`chain ${chainId}: no fresh standing`);
    const state = slot.record?.pairs[key];
    if (!state) throw new StandingUnknown(`chain ${chainId}: no standing of ${key}`);
    return state;
  }

  private chainsRead(): number[] {
    return this.opts.chains.filter((id) => this.referenced.get(id)!.size > 0);
  }

  private refreshAll(): void {
    for (const id of this.chainsRead()) void this.refresh(id);
  }

  /** Reads one chain now (single flight; a call during a read schedules one more). Never rejects. */
  private refresh(chainId: number): Promise<void> {
    const running = this.reading.get(chainId);
    if (running) {
      this.again.add(chainId);
      return running;
    }
    const read = this.read(chainId).finally(() => {
      this.reading.delete(chainId);
      if (this.again.delete(chainId)) void this.refresh(chainId);
    });
    this.reading.set(chainId, read);
    return read;
  }

  private async read(chainId: number): Promise<void> {
    const started = this.now();
    const key = bookBandKey(this.opts.keys.book(chainId));
    try {
      const results = await this.opts.redis.multi().get(key).pttl(key).exec();
      if (!results) throw new Error('transaction aborted');
      const [[getErr, text], [ttlErr, pttl]] = results as [[Error | null, string | null], [Error | null, number]];
      if (getErr || ttlErr) throw getErr ?? ttlErr;
      const record = decodeBandRecord(text);
      if (text !== null && !record) throw new Error('the standing does not parse');
      // PTTL: -2 no key, -1 no expiry (written without one: never the indexer's).
      const until = started + this.maxAgeMs;
      this.slots.set(chainId, { record, until: pttl >= 0 ? Math.min(until, started + pttl) : until });
      if (this.failing) this.opts.logger?.info('reference standings readable again', { chainId });
      this.failing = false;
    } catch (err) {
      if (!this.failing)
        this.opts.logger?.warn('reference standings unreadable; pairs with a reference are refused', {
          chainId,
          error: err instanceof Error ? err.message : String(err),
        });
      this.failing = true;
    }
  }
}
