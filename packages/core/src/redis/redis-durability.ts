/**
 * Start-up check of the Redis settings that decide whether integrator data survives.
 * Integrators, API keys and whitelists live only in Redis: a Redis that writes no append-only
 * file loses whatever it did not snapshot on restart, and one that evicts keys under memory
 * pressure (anything but `noeviction`, which BullMQ also requires) can drop them at any time.
 *
 * Each service runs the check once at start and logs a warning per problem; it never stops
 * the service (a managed Redis may persist in ways INFO cannot show). It reads INFO only:
 * CONFIG GET would hand every service the server's passwords (`requirepass`, `masterauth`), so
 * no service user may send it (redis-acl.ts). When INFO is refused too, one line says the
 * check could not run.
 */
import type { RedisKeyRole } from './redis-roles';
import type { Logger } from '../service/logger';
import { redisReady, type RedisClient } from './redis-client';
import { infoField } from './redis-info';

export interface RedisDurability {
  /** `appendonly yes`. */
  aof: boolean;
  maxmemoryPolicy: string;
}

/** The warnings for one node's settings; empty when integrator data is safe. */
export function durabilityWarnings(d: RedisDurability, role: RedisKeyRole = 'records'): string[] {
  const warnings: string[] = [];
  // INFO shows no save points: whether RDB snapshots are scheduled cannot be told, and they
  // lose every key created since the last one anyway.
  if (!d.aof)
    warnings.push(
      role === 'records'
        ? 'Redis writes no append-only file (appendonly no): integrators and API keys created since the last RDB snapshot, if any, are lost when Redis restarts. Enable AOF (appendonly yes, appendfsync always: the signer requires it on a single node).'
        : 'The Redis of the rebuildable data (REDIS_URL) writes no append-only file (appendonly no): a restart loses the mid history (the markouts of its period) and the books until the indexers write them again. Enable AOF (appendonly yes; appendfsync everysec is enough there).',
    );
  if (d.maxmemoryPolicy !== 'noeviction')
    warnings.push(
      role === 'records'
        ? `Redis maxmemory-policy is ${d.maxmemoryPolicy}: under memory pressure Redis may evict integrators, API keys and queue state. Set maxmemory-policy noeviction.`
        : `The Redis of the rebuildable data (REDIS_URL) has maxmemory-policy ${d.maxmemoryPolicy}: under memory pressure it may evict queue state, rate-limit windows and the mid history. Set maxmemory-policy noeviction.`,
    );
  return warnings;
}

/** One Redis node, as ioredis gives it (a client, or a master of a Cluster). */
export type RedisNode = { call(command: string, ...args: string[]): Promise<unknown> };
type Node = RedisNode;

/** Reads one node's settings from INFO; undefined when INFO is refused or lacks the fields. */
export async function readDurability(node: Node): Promise<RedisDurability | undefined> {
  const health = await readInfoHealth(node).catch(() => undefined);
  return health && { aof: health.aof, maxmemoryPolicy: health.maxmemoryPolicy };
}

/** What `INFO persistence` and `INFO memory` say about one node (redis-health-metrics.ts too). */
export interface RedisInfoHealth {
  aof: boolean;
  maxmemoryPolicy: string;
  usedMemoryBytes: number;
  /** 0: no limit. */
  maxmemoryBytes: number;
}

/** Reads one node's INFO; undefined when it lacks the fields, a rejection when Redis fails. */
export async function readInfoHealth(node: Node): Promise<RedisInfoHealth | undefined> {
  const info = String(await node.call('INFO', 'persistence')) + String(await node.call('INFO', 'memory'));
  const field = (name: string) => infoField(info, name);
  const policy = field('maxmemory_policy');
  const aof = field('aof_enabled');
  if (policy === undefined || aof === undefined) return undefined;
  return {
    aof: aof === '1',
    maxmemoryPolicy: policy,
    usedMemoryBytes: Number(field('used_memory') ?? 0),
    maxmemoryBytes: Number(field('maxmemory') ?? 0),
  };
}

/**
 * Logs a warning for each durability problem of the Redis behind `redis` (every master of a
 * Cluster). Resolves to the warnings; never throws.
 */
export async function checkRedisDurability(
  redis: RedisClient,
  logger: Logger,
  role: RedisKeyRole = 'records',
): Promise<string[]> {
  const nodes: Node[] = 'nodes' in redis && typeof redis.nodes === 'function' ? redis.nodes('master') : [redis];
  const warnings = new Set<string>();
  let unknown = 0;
  for (const node of nodes) {
    const durability = await readDurability(node).catch(() => undefined);
    if (!durability) unknown++;
    else for (const w of durabilityWarnings(durability, role)) warnings.add(w);
  }
  for (const w of warnings) logger.warn(w, { check: 'redis-durability' });
  if (unknown > 0)
    logger.info(
      'could not read Redis persistence and eviction settings (INFO refused): make sure AOF is on and maxmemory-policy is noeviction',
      { check: 'redis-durability' },
    );
  return [...warnings];
}

/** Runs {@link checkRedisDurability} once the client is connected (in the background). */
export function checkRedisDurabilityWhenReady(
  redis: RedisClient,
  logger: Logger,
  role: RedisKeyRole = 'records',
): void {
  redisReady(redis, 60_000).then(
    () => checkRedisDurability(redis, logger, role),
    () => undefined,
  );
}
