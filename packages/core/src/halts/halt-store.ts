/**
 * The halts in Redis (the Redis contract, redis-keys.ts), one writer per key so that no role can
 * shorten or forge another's record:
 * - `<prefix>:{halts}:active`: hash, scope name → JSON HaltRecord (halt-scope.ts): the
 *   operator's halts, written by the risk command only;
 * - `<prefix>:{halts}:trips:<chain id>`: hash, the same, for the halts chain `<chain id>`'s
 *   ledger tripped (its limits) and no operator lifted yet. That ledger's Redis user may add a
 *   field (HSETNX) and nothing else (redis-acl.ts): it can stop signing in the scopes it may trip
 *   (halt-scope.ts ledgerMayTrip), never lift, rewrite or date another's halt;
 * - `<prefix>:{halts}:log`: stream, every operator's halt and resume, and each trip once lifted
 *   (the resume moves it from its hash to the log), never trimmed (a few a day): `risk history`,
 *   and the resumes the ledgers' limits restart their window at. Written by the risk command only;
 * - `<prefix>:halts-updated`: the channel announcing each change.
 *
 * What every gateway and signer obeys (halt-view.ts) is the operator's halts and every ledger's
 * trips together ({@link readActiveHalts}). The operator's changes are Lua scripts
 * (commands/pmmHalt.lua, pmmHaltResume.lua: the hashes, the log and the notice together), run
 * under the durable-write rule (durable-writes.ts) by the caller, as is a ledger's trip.
 */
import { KNOWN_CHAIN_IDS } from '@pmm/protocol';
import { commandsDir, luaCommand, type LuaCommand } from '../redis/lua-command';
import {
  haltScopeName,
  haltRecordOf,
  parseActiveHalts,
  parseHaltRecord,
  parseLedgerTrips,
  type HaltRecord,
  type HaltScope,
  type HaltTrip,
} from './halt-scope';
import type { RedisClient } from '../redis/redis-client';
import type { RedisKeys } from '../redis/redis-keys';

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

/** The log read: its entries, oldest first, and how many entries did not parse (skipped, never thrown on). */
export interface HaltHistory {
  events: HaltEvent[];
  malformed: number;
  /** The last entry read, malformed or not (where the next read starts); undefined when none. */
  lastId: string | undefined;
}

/** The active halts: the operator's and every ledger's trips, oldest first. */
export interface ActiveHalts {
  halts: HaltRecord[];
  /** Ledger trips fields that did not hold a trip that ledger may make (each halts that ledger's chain). */
  unreadableTrips: { chainId: number; field: string }[];
}

/** The outcome of a halt: made, or the halt already in place (nothing written). */
export type HaltOutcome = { made: true } | { made: false; existing: HaltRecord };

/** core's commands/ folder, from src/halts/ (tests) or dist/halts/ (the build): two folders below the package. */
const COMMANDS = commandsDir(__dirname, 2);
/** The chains whose ledgers' trips count: every chain of the registry (a ledger user exists for each, redis-acl.ts). */
const LEDGER_CHAINS: readonly number[] = KNOWN_CHAIN_IDS;

/**
 * The operator's halts (throws when one does not parse: only the risk command writes them, and a
 * reader must not guess) and every chain's ledger's trips (an unreadable trip halts its ledger's
 * chain: halt-scope.ts parseLedgerTrips), in one round trip.
 */
export async function readActiveHalts(redis: RedisClient, keys: RedisKeys): Promise<ActiveHalts> {
  const { operator, trips } = await readHaltHashes(redis, keys);
  const halts = parseActiveHalts(operator);
  const unreadableTrips: ActiveHalts['unreadableTrips'] = [];
  LEDGER_CHAINS.forEach((chainId, i) => {
    const parsed = parseLedgerTrips(chainId, trips[i]!);
    halts.push(...parsed.halts);
    for (const field of parsed.unreadable) unreadableTrips.push({ chainId, field });
  });
  return { halts: halts.sort((a, b) => a.at - b.at), unreadableTrips };
}

/** The operator's halts hash and each ledger's trips hash (in LEDGER_CHAINS' order), in one round trip. */
async function readHaltHashes(
  redis: RedisClient,
  keys: RedisKeys,
): Promise<{ operator: Record<string, string>; trips: Record<string, string>[] }> {
  const pipeline = redis.pipeline().hgetall(keys.halts());
  for (const chainId of LEDGER_CHAINS) pipeline.hgetall(keys.haltTrips(chainId));
  const [operator, ...trips] = ((await pipeline.exec()) ?? []).map(([err, value]) => {
    if (err) throw err;
    return value as Record<string, string>;
  });
  if (operator === undefined || trips.length !== LEDGER_CHAINS.length) throw new Error('the halts were not read whole');
  return { operator, trips };
}

export class HaltStore {
  private readonly haltCommand: LuaCommand<[number, string]>;
  private readonly resumeCommand: LuaCommand<[number, string]>;

  constructor(
    private readonly redis: RedisClient,
    private readonly keys: RedisKeys,
  ) {
    this.haltCommand = luaCommand(redis, COMMANDS, 'pmmHalt', 2);
    this.resumeCommand = luaCommand(redis, COMMANDS, 'pmmHaltResume', 2 + LEDGER_CHAINS.length);
  }

  /** The active halts, the operator's and the ledgers' trips, oldest first (see {@link readActiveHalts}). */
  async active(): Promise<HaltRecord[]> {
    return (await this.read()).halts;
  }

  /** The active halts with the ledgers' unreadable trips named. */
  read(): Promise<ActiveHalts> {
    return readActiveHalts(this.redis, this.keys);
  }

  /**
   * The operator halts `record.scope` unless the operator or a ledger's trip halts it already.
   * Under durable writes, build the store on the connection run() gives: the WAIT counts that
   * connection's writes only.
   */
  async halt(record: HaltRecord): Promise<HaltOutcome> {
    const name = haltScopeName(record.scope);
    const tripped = (await this.read()).halts.find((h) => h.trip !== undefined && haltScopeName(h.scope) === name);
    if (tripped) return { made: false, existing: tripped };
    const { keys } = this;
    const [made, existing] = await this.haltCommand(
      keys.halts(),
      keys.haltLog(),
      name,
      JSON.stringify(record),
      JSON.stringify({ action: 'halt', ...record }),
      keys.haltsUpdated(),
    );
    return made === 1 ? { made: true } : { made: false, existing: parseHaltRecord(existing) };
  }

  /**
   * Chain `chainId`'s ledger trips `record.scope` (a field added to its own trips hash, never
   * written over): made, or the trip already there. The readers take it as a trip only when
   * `record` is one that ledger may make (halt-scope.ts parseLedgerTrips).
   */
  async trip(chainId: number, record: HaltRecord): Promise<HaltOutcome> {
    const key = this.keys.haltTrips(chainId);
    const name = haltScopeName(record.scope);
    if ((await this.redis.hsetnx(key, name, JSON.stringify(record))) === 1) {
      await this.redis.publish(this.keys.haltsUpdated(), name);
      return { made: true };
    }
    const existing = await this.redis.hget(key, name);
    return { made: false, existing: existing === null ? record : parseHaltRecord(existing) };
  }

  /**
   * Lifts `scope` wherever it is halted: the operator's halt and any ledger's trip of it (each
   * trip moved to the log), and, for a chain's scope, that chain's ledger's unreadable trips.
   * Resolves the lifted halt (the operator's, else a trip), or undefined when there was none.
   */
  async resume(scope: HaltScope, why: { reason: string; by: string; at: number }): Promise<HaltRecord | undefined> {
    const { keys } = this;
    const name = haltScopeName(scope);
    const event = JSON.stringify({ action: 'resume', scope, ...why });
    const chainScope = scope.chainId !== undefined && name === `chain=${scope.chainId}`;
    // A trips field changes only by a concurrent resume (a ledger never writes over one): read again.
    for (let attempt = 0; ; attempt++) {
      const { trips } = await readHaltHashes(this.redis, keys);
      const removals: (string | number)[] = [];
      let trip: HaltRecord | undefined;
      LEDGER_CHAINS.forEach((chainId, i) => {
        const fields = trips[i]!;
        const parsed = parseLedgerTrips(chainId, fields);
        for (const h of parsed.halts) {
          if (h.trip === undefined || haltScopeName(h.scope) !== name) continue;
          trip ??= h;
          removals.push(3 + i, name, fields[name]!, JSON.stringify({ action: 'halt', ...h }));
        }
        if (chainScope && scope.chainId === chainId && parsed.unreadable.length > 0) {
          // What the readers made of them: a halt of this chain.
          trip ??= parsed.halts.find((h) => h.trip === undefined);
          for (const field of parsed.unreadable) removals.push(3 + i, field, fields[field]!, '');
        }
      });
      const [made, previous] = await this.resumeCommand(
        keys.halts(),
        keys.haltLog(),
        ...LEDGER_CHAINS.map((id) => keys.haltTrips(id)),
        name,
        event,
        keys.haltsUpdated(),
        ...removals,
      );
      if (made === 1) return previous ? parseHaltRecord(previous) : trip;
      if (made === 0) return undefined;
      if (attempt >= 3) throw new Error(`the trips of ${name} kept changing while it was resumed`);
    }
  }

  /**
   * Every logged halt, resume and lifted trip, oldest first; after `afterId` (a stream entry id)
   * only those logged since it (the ledger follows the resumes this way, one short read per
   * block). An entry that does not parse is skipped and counted, never thrown on: one bad entry
   * must not blind every reader of the log.
   */
  async history(afterId?: string): Promise<HaltHistory> {
    const from = afterId === undefined ? '-' : `(${afterId}`;
    const page = (await this.redis.xrange(this.keys.haltLog(), from, '+')) as [string, string[]][];
    const history: HaltHistory = { events: [], malformed: 0, lastId: page.at(-1)?.[0] };
    for (const [id, fields] of page) {
      try {
        const v = JSON.parse(fields[1] ?? '') as { action?: unknown };
        if (v.action !== 'halt' && v.action !== 'resume') throw new Error('no action');
        history.events.push({ id, action: v.action, ...haltRecordOf(v) });
      } catch {
        history.malformed++;
      }
    }
    return history;
  }
}
