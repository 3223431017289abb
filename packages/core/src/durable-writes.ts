/**
 * Confirms that writes made through one ioredis client survive the loss of a Redis process or
 * host, before the caller acts on them (the signer returns a signature only once its audit
 * record is durable; the key CLI reports a key only once it is durable).
 *
 * Modes (docs/decisions.md#durable-writes):
 * - `fsync`: every master writes its append-only file and fsyncs it before it answers
 *   (`appendonly yes`, `appendfsync always`). Redis 7.0 has no WAITAOF, and CONFIG GET would
 *   hand the service every secret of the server's configuration, so what a service user can
 *   see is checked, with INFO persistence: the append-only file is on and its last write
 *   succeeded, on each connection before its first write, again after each reconnect and at
 *   most `recheckMs` later, so a changed or restarted Redis is noticed. `appendfsync always`
 *   is the deployment's: INFO does not show it (docs/decisions.md#durable-writes).
 * - `replica`: after the writes, `WAIT <replicas> <waitTimeoutMs>` on every master connection:
 *   fewer acknowledgements than `replicas` is a failure.
 * - `none`: nothing is confirmed (development and the shared test Redis only).
 *
 * In every mode a connection that closed between {@link DurableWrites.begin} and
 * {@link DurableWrites.confirm} fails the confirmation: ioredis re-sends unanswered commands
 * on a new connection, where WAIT would count nothing of the old one's writes and a restarted
 * Redis may have answered a write it then lost.
 */
import type { Cluster, Redis } from 'ioredis';
import type { RedisClient } from './redis-client';
import { infoField } from './redis-info';

export const DURABILITY_MODES = ['auto', 'fsync', 'replica', 'none'] as const;
export type DurabilitySetting = (typeof DURABILITY_MODES)[number];
export type DurabilityMode = Exclude<DurabilitySetting, 'auto'>;

export interface DurabilityPolicy {
  mode: DurabilityMode;
  /** Replica acknowledgements WAIT must get (replica mode). */
  replicas: number;
  /** How long WAIT waits for them. */
  waitTimeoutMs: number;
  /** Longest time an fsync check stays valid on a connection that did not reconnect. */
  recheckMs?: number;
}

/** A write could not be confirmed durable: the caller must not act on it. */
export class DurabilityError extends Error {}

/**
 * `auto`: `replica` for Sentinel and Cluster URLs (a fail-over promotes a replica, which has
 * only what it acknowledged), `fsync` for a single node.
 */
export function resolveDurabilityMode(setting: DurabilitySetting, redisUrl: string): DurabilityMode {
  if (setting !== 'auto') return setting;
  return /^rediss?-(sentinel|cluster):/.test(redisUrl) ? 'replica' : 'fsync';
}

/** One master connection's state: a new generation at each close. */
interface NodeState {
  generation: number;
  /** The generation and time the fsync settings were last seen right. */
  verified?: { generation: number; at: number };
  checking?: Promise<void>;
}

/** What begin() saw: each master connection's generation. */
export interface WriteSession {
  readonly generations: ReadonlyMap<Redis, number>;
  /** Set by run() just before the writes are sent: which WAIT on one connection covers them. */
  ticket?: number;
}

export class DurableWrites {
  private readonly nodes = new WeakMap<Redis, NodeState>();
  /** Writes sent through run() so far, on a single connection (one ticket per run). */
  private sent = 0;
  /** The latest WAIT on a single connection, and the tickets it covers (every write sent before it). */
  private lastWait?: { covers: number; acks: Promise<number> };

  constructor(
    readonly redis: RedisClient,
    readonly policy: DurabilityPolicy,
  ) {}

  /** Writes confirmed by nothing (`none`): tests, benchmarks of the rest, the shared test Redis. */
  static unconfirmed(redis: RedisClient): DurableWrites {
    return new DurableWrites(redis, { mode: 'none', replicas: 1, waitTimeoutMs: 1 });
  }

  /** Call before the writes: in fsync mode, rejects unless every master is seen to fsync each write. */
  async begin(): Promise<WriteSession> {
    const masters = this.masters();
    // A Cluster client lists no master before its first slot map: nothing to vouch for yet.
    if (masters.length === 0 && this.policy.mode !== 'none') throw new DurabilityError('no Redis master connected');
    if (this.policy.mode === 'fsync') await Promise.all(masters.map((node) => this.verifyFsync(node)));
    return { generations: new Map(masters.map((node) => [node, this.state(node).generation])) };
  }

  /** Call once the writes are answered: resolves when they are durable, else DurabilityError. */
  async confirm(session: WriteSession): Promise<void> {
    if (this.policy.mode === 'none') return;
    const masters = this.masters();
    if (this.policy.mode === 'replica') {
      const { replicas, waitTimeoutMs } = this.policy;
      const acks = await Promise.all(masters.map((node) => this.waitFor(node, session.ticket)));
      const short = acks.find((n) => n < replicas);
      if (short !== undefined)
        throw new DurabilityError(`${short} of ${replicas} replica acknowledgements within ${waitTimeoutMs} ms`);
    }
    for (const node of masters) {
      if (session.generations.get(node) !== this.state(node).generation)
        throw new DurabilityError('the Redis connection changed while writing');
    }
  }

  /**
   * begin(), the writes, confirm(): the writes' result once durable. `writes` must send its
   * first command synchronously (as an ioredis call does): its ticket is taken just before.
   */
  async run<T>(writes: () => Promise<T>): Promise<T> {
    const session = await this.begin();
    session.ticket = ++this.sent;
    const result = await writes();
    await this.confirm(session);
    return result;
  }

  /**
   * WAIT on `node`. On a single connection, answers arrive in the order commands were sent, and
   * a WAIT blocks the connection until it returns: so a WAIT sent after a write (a higher
   * ticket) covers it, and the writes answered while one WAIT is out share the next one (group
   * commit) instead of each queueing its own behind the other. Not on a Cluster: a redirected
   * write may be sent again after a WAIT on another node.
   */
  private waitFor(node: Redis, ticket: number | undefined): Promise<number> {
    const single = !isCluster(this.redis);
    if (single && ticket !== undefined && this.lastWait && this.lastWait.covers >= ticket) return this.lastWait.acks;
    const { replicas, waitTimeoutMs } = this.policy;
    const acks = node.call('WAIT', String(replicas), String(waitTimeoutMs)).then(Number, (err: unknown) => {
      throw new DurabilityError(`WAIT failed: ${err instanceof Error ? err.message : String(err)}`);
    });
    if (single) this.lastWait = { covers: this.sent, acks };
    return acks;
  }

  /** Every master connection (one, unless the client is a Cluster). */
  private masters(): Redis[] {
    const client = this.redis;
    return isCluster(client) ? client.nodes('master') : [client];
  }

  private state(node: Redis): NodeState {
    let state = this.nodes.get(node);
    if (!state) {
      const created: NodeState = { generation: 0 };
      node.on('close', () => {
        created.generation++;
        created.verified = undefined;
      });
      this.nodes.set(node, (state = created));
    }
    return state;
  }

  private async verifyFsync(node: Redis): Promise<void> {
    const state = this.state(node);
    const recheckMs = this.policy.recheckMs ?? 10_000;
    const fresh = (v: NodeState['verified']) =>
      v !== undefined && v.generation === state.generation && Date.now() - v.at < recheckMs;
    if (fresh(state.verified)) return;
    state.checking ??= this.checkFsync(node, state).finally(() => (state.checking = undefined));
    await state.checking;
    if (!fresh(state.verified)) throw new DurabilityError('Redis fsync settings could not be confirmed');
  }

  private async checkFsync(node: Redis, state: NodeState): Promise<void> {
    const generation = state.generation;
    let info: string;
    try {
      info = String(await node.call('INFO', 'persistence'));
    } catch (err) {
      throw new DurabilityError(
        `cannot read the Redis persistence state (INFO persistence): ${err instanceof Error ? err.message : String(err)}`,
      );
    }
    const aof = infoField(info, 'aof_enabled');
    if (aof !== '1')
      throw new DurabilityError(
        `Redis writes no append-only file (aof_enabled ${aof ?? '?'}; needs appendonly yes, appendfsync always)`,
      );
    // A failed write or fsync of the file (a full disk): Redis then refuses writes itself, but a
    // write answered before it noticed is not on disk.
    const lastWrite = infoField(info, 'aof_last_write_status');
    if (lastWrite !== 'ok')
      throw new DurabilityError(
        `Redis failed to write its append-only file (aof_last_write_status ${lastWrite ?? '?'})`,
      );
    if (state.generation === generation) state.verified = { generation, at: Date.now() };
  }
}

function isCluster(client: RedisClient): client is Cluster {
  return 'nodes' in client && typeof client.nodes === 'function';
}
