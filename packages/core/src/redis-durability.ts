/**
 * Start-up check of the Redis settings that decide whether integrator data survives.
 * Integrators, API keys and whitelists live only in Redis: a Redis that neither writes an
 * append-only file nor snapshots loses them on restart, and one that evicts keys under memory
 * pressure (anything but `noeviction`, which BullMQ also requires) can drop them at any time.
 *
 * Each service runs the check once at start and logs a warning per problem; it never stops
 * the service (a managed Redis may persist in ways CONFIG cannot show). CONFIG GET is tried
 * first; managed Redis services often disable it, so INFO is the fallback; when neither
 * answers, one line says the check could not run.
 */
import type { Logger } from './logger';
import { redisReady, type RedisClient } from './redis-client';

export interface RedisDurability {
  /** `appendonly yes`. */
  aof: boolean;
  /** RDB snapshots configured (`save` not empty). */
  rdb: boolean;
  maxmemoryPolicy: string;
}

/** The warnings for one node's settings; empty when integrator data is safe. */
export function durabilityWarnings(d: RedisDurability): string[] {
  const warnings: string[] = [];
  if (!d.aof && !d.rdb)
    warnings.push(
      'Redis persistence is off (appendonly no, no save points): integrators and API keys are lost when Redis restarts. Enable AOF (appendonly yes, appendfsync always: the signer requires it on a single node).',
    );
  else if (!d.aof)
    warnings.push(
      'Redis persists by RDB snapshots only: keys created since the last snapshot are lost when Redis restarts. Enable AOF (appendonly yes, appendfsync always: the signer requires it on a single node).',
    );
  if (d.maxmemoryPolicy !== 'noeviction')
    warnings.push(
      `Redis maxmemory-policy is ${d.maxmemoryPolicy}: under memory pressure Redis may evict integrators, API keys and queue state. Set maxmemory-policy noeviction.`,
    );
  return warnings;
}

/** One Redis node, as ioredis gives it (a client, or a master of a Cluster). */
export type RedisNode = { call(command: string, ...args: string[]): Promise<unknown> };
type Node = RedisNode;

/** Reads one node's settings: CONFIG GET, else INFO; undefined when neither is allowed. */
export async function readDurability(node: Node): Promise<RedisDurability | undefined> {
  try {
    const pairs = (await node.call('CONFIG', 'GET', '*')) as string[];
    const config = new Map<string, string>();
    for (let i = 0; i + 1 < pairs.length; i += 2) config.set(pairs[i]!, pairs[i + 1]!);
    if (config.has('appendonly') && config.has('maxmemory-policy'))
      return {
        aof: config.get('appendonly') === 'yes',
        rdb: (config.get('save') ?? '').trim() !== '',
        maxmemoryPolicy: config.get('maxmemory-policy')!,
      };
  } catch {
    // CONFIG disabled or renamed (managed Redis): fall back to INFO.
  }
  const health = await readInfoHealth(node).catch(() => undefined);
  // INFO does not show save points; a snapshot ever taken (rdb_last_save_time > 0 after a
  // bgsave) is not proof of a schedule, so RDB is reported as off and only AOF counts.
  return health && { aof: health.aof, rdb: false, maxmemoryPolicy: health.maxmemoryPolicy };
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
  const field = (name: string) => new RegExp(`^${name}:(.*)$`, 'm').exec(info)?.[1]?.trim();
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
export async function checkRedisDurability(redis: RedisClient, logger: Logger): Promise<string[]> {
  const nodes: Node[] = 'nodes' in redis && typeof redis.nodes === 'function' ? redis.nodes('master') : [redis];
  const warnings = new Set<string>();
  let unknown = 0;
  for (const node of nodes) {
    const durability = await readDurability(node).catch(() => undefined);
    if (!durability) unknown++;
    else for (const w of durabilityWarnings(durability)) warnings.add(w);
  }
  for (const w of warnings) logger.warn(w, { check: 'redis-durability' });
  if (unknown > 0)
    logger.info(
      'could not read Redis persistence and eviction settings (CONFIG and INFO refused): make sure AOF is on and maxmemory-policy is noeviction',
      { check: 'redis-durability' },
    );
  return [...warnings];
}

/** Runs {@link checkRedisDurability} once the client is connected (in the background). */
export function checkRedisDurabilityWhenReady(redis: RedisClient, logger: Logger): void {
  redisReady(redis, 60_000).then(
    () => checkRedisDurability(redis, logger),
    () => undefined,
  );
}
