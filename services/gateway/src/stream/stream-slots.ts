/**
 * Open `/v2/price/stream` connections per API key, counted across every gateway replica.
 *
 * Each open stream holds a LEASE: a member of the key's sorted set
 * `<prefix>:streams:<keyId>` whose score is the lease's expiry (Redis server time, ms, so
 * replicas' clocks do not matter). A replica renews the leases of its open streams every third
 * of the lease life in one call per key, and removes a lease when its stream closes. A
 * replica that dies (killed, partitioned) stops renewing: its leases lapse within one lease
 * life and the slots are free again; no slot leaks.
 *
 * INVARIANT: acquiring is one Lua script (drop lapsed leases, count, add), so concurrent
 * connects on any number of replicas never admit more than the limit. Renewal re-adds a
 * lease that lapsed meanwhile (a Redis restart or a stall longer than the lease), so after
 * such an outage the count may exceed the limit until streams close; new connects are
 * refused until it is back under.
 */
import { randomUUID } from 'node:crypto';
import { commandsDir, luaCommand, redisKeys, type RedisClient } from '@pmm/core';

const COMMANDS = commandsDir(__dirname, 2);

type Script = (key: string, ...args: (string | number)[]) => Promise<number>;

/** A held slot; `release` is idempotent. */
export interface StreamLease {
  release(): void;
}

export class StreamSlots {
  private readonly keys: ReturnType<typeof redisKeys>;
  /** This replica's identity in members, so two replicas never collide. */
  private readonly replica = randomUUID();
  private seq = 0;
  /** Held leases: Redis key → members. */
  private readonly held = new Map<string, Set<string>>();
  private readonly acquireScript: Script;
  private readonly renewScript: Script;
  private timer?: NodeJS.Timeout;

  constructor(
    private readonly redis: RedisClient,
    prefix: string,
    private readonly leaseMs: number,
  ) {
    this.keys = redisKeys(prefix);
    this.acquireScript = luaCommand<number>(redis, COMMANDS, 'pmmStreamAcquire', 1);
    this.renewScript = luaCommand<number>(redis, COMMANDS, 'pmmStreamRenew', 1);
  }

  /**
   * Takes one of `limit` slots of the API key `keyId`: a lease, or null when the key already
   * has `limit` open streams. Rejects when Redis cannot be reached.
   */
  async acquire(keyId: string, limit: number): Promise<StreamLease | null> {
    const key = this.keys.streamSlots(keyId);
    const member = `${this.replica}:${++this.seq}`;
    const granted = await this.acquireScript(key, limit, this.leaseMs, member);
    if (Number(granted) !== 1) return null;
    let members = this.held.get(key);
    if (!members) this.held.set(key, (members = new Set()));
    members.add(member);
    this.schedule();
    let released = false;
    return {
      release: () => {
        if (released) return;
        released = true;
        const set = this.held.get(key);
        set?.delete(member);
        if (set?.size === 0) this.held.delete(key);
        // Best effort: if it does not reach Redis, the lease lapses by itself.
        this.redis.zrem(key, member).catch(() => undefined);
      },
    };
  }

  /** Open leases held by this replica (all keys). */
  get size(): number {
    let n = 0;
    for (const set of this.held.values()) n += set.size;
    return n;
  }

  /** Renews every held lease now (the timer calls this every third of the lease life). */
  async renew(): Promise<void> {
    await Promise.all(
      [...this.held].map(([key, members]) => this.renewScript(key, this.leaseMs, ...members).catch(() => undefined)),
    );
  }

  /** Stops renewing (the leases then lapse unless released). */
  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  private schedule(): void {
    if (this.timer) return;
    this.timer = setInterval(
      () => {
        if (this.held.size === 0) return this.stop();
        void this.renew();
      },
      Math.floor(this.leaseMs / 3),
    );
    this.timer.unref();
  }
}
