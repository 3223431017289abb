/**
 * The halts in Redis (the Redis contract, redis-keys.ts):
 * - `<prefix>:{halts}:active`: hash, scope name → JSON HaltRecord (halt-scope.ts), what every
 *   gateway and signer reads (halt-view.ts);
 * - `<prefix>:{halts}:log`: stream, one entry per halt, resume or automatic trip, never trimmed
 *   (a few a day): `risk history`, and the resumes the ledger's limits restart their window at;
 * - `<prefix>:halts-updated`: the channel announcing each change.
 *
 * A change is one Lua script (commands/pmmHaltChange.lua: the hash, the log and the notice
 * together), run under the durable-write rule (durable-writes.ts) by the caller: the command
 * reports a halt only once it would survive the loss of Redis. Two callers write: the risk
 * command (halts and resumes) and the ledger, whose limits trip halts (never resumes: its Redis
 * user may not, redis-acl.ts).
 */
import { commandsDir, luaCommand, type LuaCommand } from './lua-command';
import {
  haltScopeName,
  haltRecordOf,
  parseActiveHalts,
  parseHaltRecord,
  type HaltRecord,
  type HaltScope,
  type HaltTrip,
} from './halt-scope';
import type { RedisClient } from './redis-client';
import type { RedisKeys } from './redis-keys';

/** One entry of the halts' log. */
export interface HaltEvent {
  /** The stream entry's id (`<ms>-<seq>`). */
  id: string;
  action: 'halt' | 'resume';
  scope: HaltScope;
  reason: string;
  by: string;
  /** Unix ms. */
  at: number;
  trip?: HaltTrip;
}

/** The outcome of a halt: made, or the halt already in place (nothing written). */
export type HaltOutcome = { made: true } | { made: false; existing: HaltRecord };

const COMMANDS = commandsDir(__dirname, 1);

export class HaltStore {
  private readonly change: LuaCommand<[number, string]>;

  constructor(
    private readonly redis: RedisClient,
    private readonly keys: RedisKeys,
  ) {
    this.change = luaCommand(redis, COMMANDS, 'pmmHaltChange', 2);
  }

  /** The active halts, oldest first; throws when one does not parse (a reader must not guess). */
  async active(): Promise<HaltRecord[]> {
    return parseActiveHalts(await this.redis.hgetall(this.keys.halts()));
  }

  /** Halts `record.scope` unless it is halted already. Under durable writes, build the store on the connection run() gives: the WAIT counts that connection's writes only. */
  async halt(record: HaltRecord): Promise<HaltOutcome> {
    const [made, existing] = await this.run('halt', record.scope, JSON.stringify(record), {
      action: 'halt',
      ...record,
    });
    return made === 1 ? { made: true } : { made: false, existing: parseHaltRecord(existing) };
  }

  /** Lifts the halt of exactly `scope`; resolves the lifted halt, or undefined when there was none. */
  async resume(scope: HaltScope, why: { reason: string; by: string; at: number }): Promise<HaltRecord | undefined> {
    const [made, previous] = await this.run('resume', scope, '', { action: 'resume', scope, ...why });
    return made === 1 ? parseHaltRecord(previous) : undefined;
  }

  private run(action: 'halt' | 'resume', scope: HaltScope, record: string, event: Omit<HaltEvent, 'id'>) {
    const { keys } = this;
    return this.change(
      keys.halts(),
      keys.haltLog(),
      action,
      haltScopeName(scope),
      record,
      JSON.stringify(event),
      keys.haltsUpdated(),
    );
  }

  /**
   * Every logged halt, resume and trip, oldest first; after `afterId` (a stream entry id) only
   * those logged since it (the ledger follows the resumes this way, one short read per block).
   */
  async history(afterId?: string): Promise<HaltEvent[]> {
    const from = afterId === undefined ? '-' : `(${afterId}`;
    const page = (await this.redis.xrange(this.keys.haltLog(), from, '+')) as [string, string[]][];
    return page.map(([id, fields]) => {
      const v = JSON.parse(fields[1] ?? '{}') as { action?: unknown };
      return { id, action: v.action === 'resume' ? 'resume' : 'halt', ...haltRecordOf(v) };
    });
  }
}
