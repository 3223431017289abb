/**
 * The two Redis roles (docs/decisions/0026-only-the-records-pay-for-durability-two-redis-roles.md):
 * the **records**, which nothing can rebuild (the audit trail and its daily quota counts, the
 * operator's integrators, API keys and halts, the maker's ledger) and which durable writes
 * exist for, on REDIS_RECORDS_URL; and what can be **rebuilt** (books, pair registries, the mid
 * history, rate-limit counters, price-stream slots, the indexers' queues and presence), on
 * REDIS_URL. An operator points the two at one server (REDIS_RECORDS_URL empty: every
 * deployment before the split) or at two, the records' one under `appendfsync always` and a
 * replica, the other fsyncing once a second and needing no replica.
 *
 * Which key belongs to which role is said once, here, by the names of core's key map
 * (redis-keys.ts); every key of the map has a role (redis-roles.test.ts).
 */
import { closeRedis, createRedis, type RedisClient } from './redis-client';
import { redisKeys, type RedisKeys } from './redis-keys';
import type { RedisRoleUrls } from '../settings/shared-settings';

export type RedisKeyRole = 'records' | 'rebuildable';

/** Every key (and channel) of the key map, by the role whose server holds it. */
export const REDIS_KEY_ROLES: Readonly<Record<keyof RedisKeys, RedisKeyRole>> = {
  book: 'rebuildable',
  pairs: 'rebuildable',
  updates: 'rebuildable',
  apiKey: 'records',
  apiKeyIndex: 'records',
  revokedApiKeys: 'records',
  integrator: 'records',
  accessUpdated: 'records',
  rateLimit: 'rebuildable',
  streamSlots: 'rebuildable',
  audit: 'records',
  auditSignatures: 'records',
  auditQuota: 'records',
  indexerPresence: 'rebuildable',
  indexerPresenceIndex: 'rebuildable',
  mids: 'rebuildable',
  midTimes: 'rebuildable',
  ledger: 'records',
  ledgerReverts: 'records',
  ledgerCursor: 'records',
  ledgerBlocks: 'records',
  ledgerDay: 'records',
  ledgerMarkouts: 'records',
  halts: 'records',
  haltLog: 'records',
  haltTrips: 'records',
  haltsUpdated: 'records',
  queuePrefix: 'rebuildable',
};

const ANY = '\u0000';

/**
 * The role of a key found on a server (by SCAN, say) under `prefix`, or undefined for a key the
 * map does not name. A name's arguments match anything; side keys of a key (`…:book:block`) and
 * a queue's keys (`…:q:…`) take the role of the key they extend.
 */
export function redisKeyRole(key: string, prefix: string): RedisKeyRole | undefined {
  const keys = redisKeys(prefix);
  let best: { length: number; role: RedisKeyRole } | undefined;
  for (const [name, role] of Object.entries(REDIS_KEY_ROLES) as [keyof RedisKeys, RedisKeyRole][]) {
    const build = keys[name] as (...args: string[]) => string;
    const pattern = build(ANY, ANY)
      .split(ANY)
      .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
      .join('[^:]*');
    const match = new RegExp(`^${pattern}(?::.*)?$`).exec(key);
    // The longest literal wins: `…:ledger:cursor` is the cursor, not a side key of `…:ledger`.
    if (match && (!best || pattern.length > best.length)) best = { length: pattern.length, role };
  }
  return best?.role;
}

/** One server holds both roles. */
export function oneRedisServer(urls: RedisRoleUrls): boolean {
  return urls.redisRecordsUrl === urls.redisUrl;
}

/**
 * A connection to the records' server beside `rebuildable` (a connection to REDIS_URL made with
 * the same options): `rebuildable` itself when one server holds both roles, so that a
 * deployment on one server keeps its connections; else a new one, named `<name>-records`.
 */
export function recordsConnection(
  urls: RedisRoleUrls,
  rebuildable: RedisClient,
  options: Parameters<typeof createRedis>[1],
): RedisClient {
  return oneRedisServer(urls)
    ? rebuildable
    : createRedis(urls.redisRecordsUrl, { ...options, name: `${options.name}-records` });
}

/** The other way round: a connection to REDIS_URL beside `records`, for a process that is mostly records' (the ledger). */
export function rebuildableConnection(
  urls: RedisRoleUrls,
  records: RedisClient,
  options: Parameters<typeof createRedis>[1],
): RedisClient {
  return oneRedisServer(urls) ? records : createRedis(urls.redisUrl, options);
}

/**
 * A process's connections to each distinct server, by the role it holds: the records' server
 * first; one entry (the records) when one server holds both roles. For what a process does once
 * per server: wait for it at start, check its durability, ping it for readiness.
 */
export function roleServers(redis: RedisClient, records: RedisClient): { client: RedisClient; role: RedisKeyRole }[] {
  const servers: { client: RedisClient; role: RedisKeyRole }[] = [{ client: records, role: 'records' }];
  if (redis !== records) servers.push({ client: redis, role: 'rebuildable' });
  return servers;
}

/** Closes each distinct connection once (a records connection may be the other role's). */
export async function closeRedisConnections(clients: readonly RedisClient[]): Promise<void> {
  await Promise.all([...new Set(clients)].map((client) => closeRedis(client)));
}
