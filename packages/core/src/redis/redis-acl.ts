/**
 * One Redis user per role (Redis ACL), so that a compromised process can do only what its role
 * needs: an indexer, which parses what RPC nodes send, cannot mint API keys or delete the audit
 * trail; the gateway cannot write integrators; the signer cannot touch keys. The rules are
 * declared here once and rendered as `user` lines for a Redis config or ACL file (`npm start`'s
 * private Redis; docs/operations/redis.md#redis-users-one-per-role for other deployments).
 *
 * Keys and channels are what the rules restrict (every name below is a key of redis-keys.ts);
 * commands are granted by category, without the dangerous ones (FLUSHALL, KEYS, CONFIG, DEBUG,
 * MIGRATE, ...), plus the few each process needs from those: INFO (readiness, BullMQ's
 * version check, the gateway's Redis gauges, the durability checks) and WAIT (a write
 * acknowledged by replicas). Never CONFIG GET: it reads the whole server configuration,
 * `requirepass` and `masterauth` included, and Redis 7.0 cannot limit it to one parameter
 * (docs/decisions/0053-no-redis-user-reads-the-servers-configuration.md). Of the scripting commands only EVAL and EVALSHA
 * (what ioredis's defineCommand sends, for our Lua commands and BullMQ's): never SCRIPT (FLUSH,
 * KILL) or FUNCTION (LOAD, FLUSH, ...), which change what other users' calls run.
 */
import { createHash } from 'node:crypto';
import { KNOWN_CHAIN_IDS } from '@pmm/protocol';
import { DEFAULT_KEY_PREFIX } from './redis-keys';

export type RedisUserRole = 'gateway' | 'signer' | 'indexer' | 'ledger' | 'keys' | 'operator' | 'risk';

export interface RedisRoleRule {
  /** Key patterns with read and write access (`~`). */
  readWrite: string[];
  /** Key patterns with read access only (`%R~`). */
  readOnly: string[];
  /** Pub/sub channel patterns (`&`). */
  channels: string[];
  /** May it write at all (the operator's audit and settle commands read only). */
  writes: boolean;
  /**
   * Further permissions each limited to its own keys, channels and commands (Redis 7 ACL
   * selectors): a right narrower than a key pattern's, such as the ledger's to add a halt but
   * never lift one (HSETNX on its own trips, nothing else on the halts).
   */
  selectors?: RedisAclSelector[];
}

/** One ACL selector, `(~keys &channels +commands)`: these commands on these keys and channels only. */
export interface RedisAclSelector {
  keys: string[];
  channels: string[];
  commands: string[];
}

/**
 * Commands of every service user: connection, reads, writes (where `writes`), transactions
 * (MULTI/EXEC: the indexer's registry write), pub/sub; then nothing dangerous and no scripting
 * command (`@write` holds FUNCTION LOAD and FLUSH) except the named few: the scripts (the Lua
 * commands and BullMQ's) where `writes`.
 */
function commandRules(writes: boolean): string {
  return [
    '-@all',
    '+@connection',
    '+@read',
    ...(writes ? ['+@write', '+@blocking', '+@transaction'] : []),
    '+@pubsub',
    '-@dangerous',
    '-@scripting',
    ...(writes ? ['+eval', '+evalsha'] : []),
    '+info',
    '+wait',
    '+ping',
    // The server's clock, read by the gateway's stream-slot scripts (services/gateway/commands/pmmStreamAcquire.lua
    // and pmmStreamRenew.lua); TIME is in no category but @fast.
    '+time',
  ].join(' ');
}

/**
 * What each role touches (`chainId`: the one chain of an indexer user; other roles span every
 * chain through the `{*}` hash-tag pattern). `devKey`: the gateway seeds the development key
 * (`npm start`, the compose devnet profile), so it may write that key and the `dev` integrator.
 */
export function redisRoleRule(
  role: RedisUserRole,
  opts: { prefix?: string; chainId?: number; devKey?: boolean } = {},
): RedisRoleRule {
  const p = opts.prefix ?? DEFAULT_KEY_PREFIX;
  const chain = opts.chainId === undefined ? '*' : String(opts.chainId);
  const keyData = [`${p}:apikey:*`, `${p}:apikeys`, `${p}:apikeys:revoked`, `${p}:integrator:*`];
  const halts = `${p}:{halts}:active`;
  const haltLog = `${p}:{halts}:log`;
  /** Every ledger's trips (halt-store.ts); a ledger writes its own chain's only. */
  const trips = `${p}:{halts}:trips:*`;
  const haltsUpdated = `${p}:halts-updated`;
  switch (role) {
    case 'gateway':
      return {
        // Rate-limit windows and stream slots; the development key when it seeds one.
        readWrite: [
          `${p}:rl:*`,
          `${p}:streams:*`,
          ...(opts.devKey ? [...keyData.slice(0, 3), `${p}:integrator:dev`] : []),
        ],
        // Keys and integrators (authentication), books, the console's indexer presence, audit
        // stream length and each pair's standing against its reference, and its ledger table: the
        // ledger's cursor, day totals and rolling markouts; `/v2/fills`: the audit trail and the
        // ledger's swaps and reverted calls (never its block hashes, nor the signature index).
        readOnly: [
          ...keyData,
          `${p}:{*}:book`,
          `${p}:{*}:book:band`,
          `${p}:{*}:pairs`,
          `${p}:{*}:indexer:*`,
          `${p}:{*}:indexers`,
          `${p}:{*}:audit`,
          `${p}:{*}:ledger`,
          `${p}:{*}:ledger:reverts`,
          `${p}:{*}:ledger:cursor`,
          `${p}:{*}:ledger:day:*`,
          `${p}:{*}:ledger:markout60s`,
          halts,
          trips,
        ],
        channels: [`${p}:{*}:book-updated`, `${p}:access-updated`, haltsUpdated],
        writes: true,
      };
    case 'signer':
      return {
        // The audit trail, its signature index and the daily quota counts (one script writes all three).
        readWrite: [`${p}:{*}:audit`, `${p}:{*}:audit-sig:*`, `${p}:{*}:audit-quota:*`],
        readOnly: [`${p}:integrator:*`, `${p}:{*}:pairs`, `${p}:{*}:book`, `${p}:{*}:book:*`, halts, trips],
        channels: [`${p}:{*}:book-updated`, `${p}:access-updated`, haltsUpdated],
        writes: true,
      };
    case 'indexer':
      return {
        // Its chain's book, pair registry, BullMQ queue and presence: nothing of another chain.
        readWrite: [
          `${p}:{${chain}}:book`,
          // The book's side keys (its block number and hash, indexer book-store.ts).
          `${p}:{${chain}}:book:*`,
          `${p}:{${chain}}:pairs`,
          `${p}:{${chain}}:q:*`,
          `${p}:{${chain}}:indexer:*`,
          `${p}:{${chain}}:indexers`,
          // The mids of each computed block and their times (markouts).
          `${p}:{${chain}}:mids`,
          `${p}:{${chain}}:mids:*`,
        ],
        readOnly: [],
        channels: [`${p}:{${chain}}:book-updated`],
        writes: true,
      };
    case 'ledger':
      return {
        // Its chain's ledger (swaps, cursor, block hashes, day totals, rolling markouts); the audit
        // trail (who asked for each swap), the mids and their times (markouts), and the halts, the
        // trips and their log (a scope already halted, the resumes a limit's window restarts at),
        // read only.
        readWrite: [`${p}:{${chain}}:ledger`, `${p}:{${chain}}:ledger:*`],
        readOnly: [
          `${p}:{${chain}}:audit`,
          `${p}:{${chain}}:audit-sig:*`,
          `${p}:{${chain}}:mids`,
          `${p}:{${chain}}:mids:times`,
          halts,
          haltLog,
          trips,
        ],
        channels: [],
        writes: true,
        // A limit that trips adds a field to its own chain's trips hash (HaltStore.trip: HSETNX,
        // then PUBLISH). HSETNX only: the ledger, which reads what a node sends, can stop signing
        // but never write over a trip, lift a halt, touch another ledger's trips, the operator's
        // halts or the log (a forged resume, a trimmed log). What it writes counts only when it
        // is a trip that ledger may make (halt-scope.ts parseLedgerTrips).
        selectors: [
          {
            keys: [`${p}:{halts}:trips:${chain}`],
            channels: [haltsUpdated],
            commands: ['hsetnx', 'publish'],
          },
        ],
      };
    case 'keys':
      return { readWrite: keyData, readOnly: [], channels: [`${p}:access-updated`], writes: true };
    case 'operator':
      // `audit`, `settle`, `markouts` and `fills`: the audit trail and its index, the ledger (swaps, reverted calls, cursor) and the mids, read only.
      return {
        readWrite: [],
        readOnly: [
          `${p}:{*}:audit`,
          `${p}:{*}:audit-sig:*`,
          `${p}:{*}:ledger`,
          `${p}:{*}:ledger:reverts`,
          `${p}:{*}:ledger:cursor`,
          `${p}:{*}:mids`,
        ],
        channels: [],
        writes: false,
      };
    case 'risk':
      // `risk`: the halts, the ledgers' trips (a resume lifts them) and the log; reads what it
      // checks a scope against (integrators, pair registries), the audit trail (the signatures
      // a halt cannot recall), each pair's standing against its reference (`status`) and the log
      // of its transitions in and out of band (`history`).
      return {
        readWrite: [halts, haltLog, trips],
        readOnly: [
          `${p}:integrator:*`,
          `${p}:{*}:pairs`,
          `${p}:{*}:audit`,
          `${p}:{*}:book:band`,
          `${p}:{*}:book:band:log`,
        ],
        channels: [haltsUpdated],
        writes: true,
      };
  }
}

/** SHA-256 of a password in hex: how an ACL line holds it (`#<hash>`), never the password itself. */
export function aclPasswordHash(password: string): string {
  return createHash('sha256').update(password).digest('hex');
}

/** One `user` line for a Redis config or ACL file: the user on, its password by hash, its rules. */
export function aclUserLine(user: string, password: string, rule: RedisRoleRule): string {
  return [
    'user',
    user,
    'reset',
    'on',
    `#${aclPasswordHash(password)}`,
    ...rule.readWrite.map((k) => `~${k}`),
    ...rule.readOnly.map((k) => `%R~${k}`),
    ...rule.channels.map((c) => `&${c}`),
    commandRules(rule.writes),
    ...(rule.selectors ?? []).map(
      (s) =>
        `(${[...s.keys.map((k) => `~${k}`), ...s.channels.map((c) => `&${c}`), ...s.commands.map((c) => `+${c}`)].join(' ')})`,
    ),
  ].join(' ');
}

/** A Redis user of the project's own stacks (`npm start`, docker-compose.yml): its name and role. */
export interface RedisStackUser {
  user: string;
  role: RedisUserRole;
  /** The one chain of an indexer or ledger user. */
  chainId?: number;
}

/**
 * The users `npm start` and docker-compose.yml create: one per process kind, one per chain's
 * indexer and ledger (named `indexer-<id>`, `ledger-<id>`, like the compose services), the key CLI's,
 * the operator's and the risk command's.
 */
export function redisStackUsers(chainIds: readonly number[] = KNOWN_CHAIN_IDS): RedisStackUser[] {
  return [
    { user: 'gateway', role: 'gateway' },
    { user: 'signer', role: 'signer' },
    { user: 'keys', role: 'keys' },
    { user: 'operator', role: 'operator' },
    { user: 'risk', role: 'risk' },
    ...chainIds.map((chainId) => ({ user: `indexer-${chainId}`, role: 'indexer' as const, chainId })),
    ...chainIds.map((chainId) => ({ user: `ledger-${chainId}`, role: 'ledger' as const, chainId })),
  ];
}

/**
 * The default user of a stack's Redis: off, so that a connection that authenticates as nobody
 * can do nothing (every command but AUTH and HELLO answers NOAUTH, PING included), and with
 * every right.
 *
 * Every right, because Redis (7.0 to 8.x before redis/redis#14545) checks each transaction it
 * replays from the append-only file at start against the DEFAULT user's rights: a script that
 * writes more than once (the signer's audit record, a halt) is logged as MULTI/EXEC, and a
 * default user without those rights made a restarted server drop every such write, silently
 * (the audit trail and the halts lost, the key records kept). The rights of a user that is off
 * are used by nothing else: no client can log in as it. Container health checks accept NOAUTH
 * as a live server (docker-compose.yml).
 */
export const DEFAULT_USER_OFF = 'user default reset off ~* &* +@all';

/**
 * The `user` lines of {@link redisStackUsers}, each with its password from `passwords` (by user
 * name; every one needed), held as its SHA-256. `devKey`: the gateway seeds the development key
 * (`npm start`, a devnet trial).
 */
export function stackAclUserLines(
  passwords: Readonly<Record<string, string>>,
  opts: { prefix?: string; devKey?: boolean; chainIds?: readonly number[] } = {},
): string[] {
  return redisStackUsers(opts.chainIds).map(({ user, role, chainId }) => {
    const password = passwords[user];
    if (!password) throw new Error(`no password for the Redis user ${user}`);
    const devKey = role === 'gateway' && opts.devKey === true;
    return aclUserLine(user, password, redisRoleRule(role, { prefix: opts.prefix, chainId, devKey }));
  });
}

/**
 * The administrator of a stack's Redis: every key, channel and command, with its own password.
 * An ACL user rather than `requirepass` (which is the default user's password): the default
 * user stays off, and no password of the server is a configuration parameter.
 */
export function adminAclUserLine(user: string, password: string): string {
  return ['user', user, 'reset', 'on', `#${aclPasswordHash(password)}`, '~*', '&*', '+@all'].join(' ');
}

/**
 * A whole ACL file (Redis `aclfile`, or the `user` lines of a config file): the default user
 * off ({@link DEFAULT_USER_OFF}), the administrator when `admin` is given (`npm start`'s), then
 * {@link stackAclUserLines}.
 */
export function stackAclFile(
  passwords: Readonly<Record<string, string>>,
  opts: {
    prefix?: string;
    devKey?: boolean;
    chainIds?: readonly number[];
    admin?: { user: string; password: string };
  } = {},
): string {
  const admin = opts.admin ? [adminAclUserLine(opts.admin.user, opts.admin.password)] : [];
  return `${[DEFAULT_USER_OFF, ...admin, ...stackAclUserLines(passwords, opts)].join('\n')}\n`;
}
