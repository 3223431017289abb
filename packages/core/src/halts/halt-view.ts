/**
 * A process's view of the active halts (the operator's and the ledgers' trips, halt-store.ts
 * readActiveHalts), what the signer checks before it signs and the gateway before it serves a book.
 *
 * Freshness (the one-second promise of docs/operations/halts.md#halts):
 * - the `halts-updated` channel: the risk command publishes after each change, and the view
 *   re-reads at once (a read already under way is followed by another: it may predate the change);
 * - a re-read every `refreshMs` (default 200 ms), and after every (re)connection of either
 *   connection: pub/sub keeps no backlog, so a lost notice is bounded by the re-read alone;
 * - INVARIANT: the view answers only while its last good read STARTED less than `maxAgeMs`
 *   (default 800 ms) ago. A halt confirmed before that read started is in it, so no request
 *   checked more than `maxAgeMs` after a halt's command returned can pass it. Older than that
 *   (Redis unreachable, a record that does not parse), {@link HaltView.current} throws
 *   HaltsUnreadable: the caller refuses (fail closed), it never assumes "no halt".
 */
import type { HaltRecord } from './halt-scope';
import { readActiveHalts } from './halt-store';
import type { Logger } from '../service/logger';
import type { RedisClient } from '../redis/redis-client';
import type { RedisKeys } from '../redis/redis-keys';

/** The halts could not be read recently enough to rely on: refuse what they could cover. */
export class HaltsUnreadable extends Error {}

export interface HaltViewOptions {
  /** Command connection (HGETALL of the halts' hashes). */
  redis: RedisClient;
  /** A connection in subscriber mode (may be shared; the caller closes it); without it, the re-read alone. */
  subscriber?: RedisClient;
  keys: RedisKeys;
  logger?: Logger;
  /** Periodic re-read, ms; default 200. */
  refreshMs?: number;
  /** Longest a read's result is relied on, counted from its start, ms; default 800 (below the promised second). */
  maxAgeMs?: number;
  now?: () => number;
}

export class HaltView {
  private halts: readonly HaltRecord[] = [];
  /** When the last good read started (ms); -Infinity before the first. */
  private readAt = -Infinity;
  private reading: Promise<void> | undefined;
  /** A notice came while a read was under way: read once more after it. */
  private again = false;
  private timer: NodeJS.Timeout | undefined;
  private failing = false;
  /** The ledgers' unreadable trips last logged (each halts its ledger's chain), to log a change once. */
  private unreadable = '';
  private readonly channel: string;
  private readonly now: () => number;
  private readonly maxAgeMs: number;
  private readonly onMessage = (channel: string) => {
    if (channel === this.channel) void this.refresh();
  };
  private readonly onReady = () => void this.refresh();

  constructor(private readonly opts: HaltViewOptions) {
    this.channel = opts.keys.haltsUpdated();
    this.now = opts.now ?? Date.now;
    this.maxAgeMs = opts.maxAgeMs ?? 800;
  }

  /** Subscribes, starts the re-reads and reads once. Never rejects: until a read succeeds, current() throws. */
  async start(): Promise<void> {
    const { subscriber, redis } = this.opts;
    redis.on('ready', this.onReady);
    if (subscriber) {
      subscriber.on('message', this.onMessage);
      subscriber.on('ready', this.onReady);
      // A subscriber queues SUBSCRIBE while Redis is down; ioredis resubscribes after a reconnect.
      subscriber.subscribe(this.channel).catch(() => undefined);
    }
    this.timer = setInterval(() => void this.refresh(), this.opts.refreshMs ?? 200);
    this.timer.unref();
    await this.refresh();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    const { subscriber, redis } = this.opts;
    redis.off('ready', this.onReady);
    if (!subscriber) return;
    subscriber.off('message', this.onMessage);
    subscriber.off('ready', this.onReady);
    if (subscriber.status === 'ready') await subscriber.unsubscribe(this.channel).catch(() => undefined);
  }

  /** The active halts; throws HaltsUnreadable when the last good read is too old (fail closed). */
  current(): readonly HaltRecord[] {
    const age = this.now() - this.readAt;
    if (age >= this.maxAgeMs)
      throw new HaltsUnreadable(
        Number.isFinite(age) ? `the halts were last read ${age} ms ago` : 'the halts have not been read yet',
      );
    return this.halts;
  }

  /** The halts of the last good read, however old (metrics and the console, which show, not decide). */
  lastRead(): { halts: readonly HaltRecord[]; readAt: number } {
    return { halts: this.halts, readAt: this.readAt };
  }

  /** Reads the halts now (single flight; a call during a read schedules one more). Never rejects. */
  refresh(): Promise<void> {
    if (this.reading) {
      this.again = true;
      return this.reading;
    }
    this.reading = this.read().finally(() => {
      this.reading = undefined;
      if (this.again) {
        this.again = false;
        void this.refresh();
      }
    });
    return this.reading;
  }

  private async read(): Promise<void> {
    const startedAt = this.now();
    try {
      const { halts, unreadableTrips } = await readActiveHalts(this.opts.redis, this.opts.keys);
      this.halts = halts;
      const unreadable = JSON.stringify(unreadableTrips.map((t) => t.chainId));
      if (unreadable !== this.unreadable && unreadableTrips.length > 0)
        this.opts.logger?.error(
          "a ledger's trip record is unreadable: its chain is halted until an operator resumes it",
          {
            chains: [...new Set(unreadableTrips.map((t) => t.chainId))],
            records: unreadableTrips.length,
          },
        );
      this.unreadable = unreadable;
      this.readAt = Math.max(this.readAt, startedAt);
      if (this.failing) this.opts.logger?.info('halts readable again', { halts: halts.length });
      this.failing = false;
    } catch (err) {
      // Logged once per outage: the re-read runs five times a second.
      if (!this.failing)
        this.opts.logger?.error('halts cannot be read: signing stops within a second (fail closed)', {
          error: err instanceof Error ? err.message : String(err),
        });
      this.failing = true;
    }
  }
}
