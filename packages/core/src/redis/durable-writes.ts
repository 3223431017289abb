/**
 * Confirms that writes made through an ioredis client survive the loss of a Redis process or
 * host, before the caller acts on them (the signer returns a signature only once its audit
 * record is durable; the key CLI reports a key only once it is durable).
 *
 * Modes (docs/decisions/0020-durable-writes.md):
 * - `fsync`: every master writes its append-only file and fsyncs it before it answers
 *   (`appendonly yes`, `appendfsync always`). Redis 7.0 has no WAITAOF, and CONFIG GET would
 *   hand the service every secret of the server's configuration, so what a service user can
 *   see is checked, with INFO persistence: the append-only file is on and its last write
 *   succeeded, on each connection before its first write, again after each reconnect and at
 *   most `recheckMs` later, so a changed or restarted Redis is noticed. `appendfsync always`
 *   is the deployment's: INFO does not show it (docs/decisions/0020-durable-writes.md).
 * - `replica`: `WAIT <replicas> <waitTimeoutMs>` on every master connection the writes were made
 *   on, after them (on one master, sent right behind them, before their answers: one round
 *   trip): fewer acknowledgements than `replicas` is a failure. A WAIT
 *   holds its connection until the replicas answer, so writes are spread over several
 *   connections (lanes), each carrying one flight of writes and its WAIT at a time
 *   ({@link DurableWrites.run}).
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

/**
 * The per-command limit of a connection that carries durable writes: past the WAIT's own timeout,
 * so that a WAIT allowed to take `waitTimeoutMs` is not cut short by the connection's default
 * (2 s) and reported as a failure it is not.
 */
export function durableCommandTimeoutMs(policy: DurabilityPolicy): number {
  return policy.waitTimeoutMs + 2_000;
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

/**
 * Commands that write nothing a WAIT would confirm: ours (WAIT, INFO) and what ioredis sends on
 * its own when it (re)connects a node connection. Any other command marks its connection.
 */
const WRITES_NOTHING: ReadonlySet<string> = new Set([
  'wait',
  'info',
  'auth',
  'hello',
  'client',
  'select',
  'readonly',
  'ping',
  'cluster',
]);

/** One master connection's state: a new generation at each close. */
interface NodeState {
  generation: number;
  /**
   * A command that may write went out on it since its last WAIT (replica mode). On a
   * Cluster a flight writes to the masters of its keys' slots, or wherever a redirect sends
   * them; only those need a WAIT. A WAIT on another master answers for that master's replicas
   * alone, and one whose replica is gone answered 0: every sign failed for a replica that held
   * none of its records.
   */
  sent: boolean;
  /** The generation and time the fsync settings were last seen right. */
  verified?: { generation: number; at: number };
  checking?: Promise<void>;
}

/** What begin() saw: the connection written on, and each of its master connections' generation. */
export interface WriteSession {
  readonly lane: RedisClient;
  readonly generations: ReadonlyMap<Redis, number>;
}

/** A run waiting for a connection (replica mode). */
interface Waiting {
  writes: (redis: RedisClient) => Promise<unknown>;
  resolve(value: unknown): void;
  reject(err: unknown): void;
}

export class DurableWrites {
  /**
   * The connections writes are made and confirmed on: one, or in replica mode several, each
   * carrying one flight (writes, then their WAIT) at a time.
   */
  readonly lanes: readonly RedisClient[];
  private readonly nodes = new WeakMap<Redis, NodeState>();
  /** Lanes with a flight out. */
  private readonly flying = new Set<RedisClient>();
  /** Runs that found every lane flying: the next lane to land takes them all, as one flight. */
  private waiting: Waiting[] = [];

  constructor(
    redis: RedisClient | readonly RedisClient[],
    readonly policy: DurabilityPolicy,
  ) {
    this.lanes = Array.isArray(redis) ? [...(redis as readonly RedisClient[])] : [redis as RedisClient];
    if (this.lanes.length === 0) throw new Error('DurableWrites needs a Redis connection');
  }

  /** The first connection: the only one unless several were given. */
  get redis(): RedisClient {
    return this.lanes[0]!;
  }

  /** Writes confirmed by nothing (`none`): tests, benchmarks of the rest, the shared test Redis. */
  static unconfirmed(redis: RedisClient): DurableWrites {
    return new DurableWrites(redis, { mode: 'none', replicas: 1, waitTimeoutMs: 1 });
  }

  /**
   * Call before writing on `lane` (default: the first connection): in fsync mode, rejects unless
   * every master is seen to fsync each write.
   */
  async begin(lane: RedisClient = this.redis): Promise<WriteSession> {
    this.watchNewNodes(lane);
    const masters = masterConnections(lane);
    // A Cluster client lists no master before its first slot map: nothing to vouch for yet.
    if (masters.length === 0 && this.policy.mode !== 'none') throw new DurabilityError('no Redis master connected');
    if (this.policy.mode === 'fsync') await Promise.all(masters.map((node) => this.verifyFsync(node)));
    return { lane, generations: new Map(masters.map((node) => [node, this.state(node).generation])) };
  }

  /**
   * Call once every write on the session's connection is answered: resolves when they are
   * durable, else DurabilityError. In replica mode the WAIT sent here follows those writes on
   * their connection, so it counts the replicas that acknowledged them (and every earlier write
   * of that connection: https://redis.io/commands/wait). `sentWaits`: WAITs already sent on a
   * master connection behind the writes (their answers are awaited here instead).
   */
  async confirm(session: WriteSession, sentWaits?: ReadonlyMap<Redis, Promise<number>>): Promise<void> {
    if (this.policy.mode === 'none') return;
    const masters = masterConnections(session.lane);
    if (this.policy.mode === 'replica') {
      const { replicas, waitTimeoutMs } = this.policy;
      const acks = await Promise.all(
        masters.map(async (node) => {
          const sent = sentWaits?.get(node);
          // A WAIT already sent covers every write before it; one that went out after it (a
          // NOSCRIPT's EVAL, a write made after an await) needs a WAIT of its own.
          const early = sent === undefined ? undefined : await sent;
          if (this.state(node).sent) return this.wait(node);
          return early;
        }),
      );
      const short = acks.find((n) => n !== undefined && n < replicas);
      if (short !== undefined)
        throw new DurabilityError(`${short} of ${replicas} replica acknowledgements within ${waitTimeoutMs} ms`);
    }
    for (const node of masters) {
      if (session.generations.get(node) !== this.state(node).generation)
        throw new DurabilityError('the Redis connection changed while writing');
    }
  }

  /**
   * begin(), the writes, confirm(): the writes' result once durable, else a rejection (theirs,
   * or a DurabilityError). `writes` makes its writes on the connection it is given.
   *
   * In replica mode each connection carries one flight at a time: the writes of every run it
   * took, and once all are answered one WAIT for them all. A run starts a flight at once on a
   * connection with none out; when every connection has one, the runs wait, and the first
   * connection to land takes all of them as its next flight (group commit): a WAIT holds its
   * connection for a replica round trip, but never holds up a record that another connection
   * could carry, and however many records arrive, each round trip confirms all that waited.
   */
  run<T>(writes: (redis: RedisClient) => Promise<T>): Promise<T> {
    if (this.policy.mode !== 'replica') return this.runNow(writes);
    return new Promise<T>((resolve, reject) => {
      this.waiting.push({ writes, resolve: resolve as (value: unknown) => void, reject });
      this.dispatch();
    });
  }

  /** fsync and none: nothing holds the connection, so writes go at once on the first one. */
  private async runNow<T>(writes: (redis: RedisClient) => Promise<T>): Promise<T> {
    const session = await this.begin();
    const result = await writes(session.lane);
    await this.confirm(session);
    return result;
  }

  /**
   * Starts a flight of every waiting run on a free lane. Only connected lanes take flights while
   * any lane is connected: a run would fail at once on a lane that is down (its connection has
   * no offline queue), where a connected lane coming back from its WAIT would carry it. With
   * every lane down, a run fails fast on one (the caller answers 503) rather than wait.
   */
  private dispatch(): void {
    while (this.waiting.length > 0) {
      const free = this.lanes.filter((lane) => !this.flying.has(lane));
      const anyReady = this.lanes.some((l) => l.status === 'ready');
      const lane = anyReady ? free.find((l) => l.status === 'ready') : free[0];
      if (!lane) return;
      const flight = this.waiting;
      this.waiting = [];
      this.flying.add(lane);
      void this.fly(lane, flight).finally(() => {
        this.flying.delete(lane);
        this.dispatch();
      });
    }
  }

  /**
   * One flight: the runs' writes on `lane`, then one confirmation for them all. On one master
   * (not a Cluster) the WAIT goes out right behind the writes sent at once, in the same
   * pipeline: Redis runs a connection's commands in order, so it counts the replicas'
   * acknowledgements of those writes as it would once they were answered, and the flight costs
   * one round trip to the primary instead of two (and the signer one wake-up fewer).
   */
  private async fly(lane: RedisClient, flight: Waiting[]): Promise<void> {
    let results: PromiseSettledResult<unknown>[] = [];
    let confirmed = false;
    let failure: unknown;
    try {
      const session = await this.begin(lane);
      // async: a run that throws instead of rejecting fails alone.
      const settled = Promise.allSettled(flight.map(async (w) => w.writes(lane)));
      const sentWaits = new Map<Redis, Promise<number>>();
      if (this.policy.mode === 'replica' && !isCluster(lane) && this.state(lane).sent) {
        const wait = this.wait(lane);
        // Read once the writes are answered; a failure is handled there, not left unhandled now.
        wait.catch(() => undefined);
        sentWaits.set(lane, wait);
      }
      results = await settled;
      await this.confirm(session, sentWaits);
      confirmed = true;
    } catch (err) {
      failure = err;
    }
    flight.forEach((w, i) => {
      const result = results[i];
      if (result?.status === 'rejected') w.reject(result.reason);
      else if (!confirmed || !result) w.reject(failure);
      else w.resolve(result.value);
    });
  }

  /** WAIT on one master connection: the replica acknowledgements of its writes so far. */
  private wait(node: Redis): Promise<number> {
    const { replicas, waitTimeoutMs } = this.policy;
    // What went out before this WAIT is what it covers.
    this.state(node).sent = false;
    return node.call('WAIT', String(replicas), String(waitTimeoutMs)).then(Number, (err: unknown) => {
      throw new DurabilityError(`WAIT failed: ${err instanceof Error ? err.message : String(err)}`);
    });
  }

  private state(node: Redis): NodeState {
    let state = this.nodes.get(node);
    if (!state) {
      const created: NodeState = { generation: 0, sent: false };
      node.on('close', () => {
        created.generation++;
        created.verified = undefined;
      });
      // Only a WAIT reads the mark (replica mode). Every command routed to this connection passes
      // here: a Cluster client sends each one, redirected ones (MOVED, ASK) included, with the
      // node connection's sendCommand.
      if (this.policy.mode === 'replica') {
        const send = node.sendCommand.bind(node);
        node.sendCommand = (command, stream) => {
          if (!WRITES_NOTHING.has(command.name.toLowerCase())) created.sent = true;
          return send(command, stream);
        };
      }
      this.nodes.set(node, (state = created));
    }
    return state;
  }

  /** A Cluster's master connections are watched from their creation, before any write is routed to them. */
  private readonly watched = new WeakSet<RedisClient>();
  private watchNewNodes(lane: RedisClient): void {
    if (!isCluster(lane) || this.watched.has(lane)) return;
    this.watched.add(lane);
    lane.on('+node', (node: Redis) => this.state(node));
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

/** Every master connection of a client (one, unless the client is a Cluster). */
function masterConnections(client: RedisClient): Redis[] {
  return isCluster(client) ? client.nodes('master') : [client];
}

function isCluster(client: RedisClient): client is Cluster {
  return 'nodes' in client && typeof client.nodes === 'function';
}
