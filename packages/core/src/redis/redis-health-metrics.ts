/**
 * Redis's own health as metrics, read at scrape time: what the alert rules on persistence and
 * memory need (deploy/prometheus/alerts.yml). Integrators, keys and the audit trail live only in
 * Redis, and Redis runs `noeviction`: persistence off loses them on a restart, and a full Redis
 * refuses every write, so every signature.
 *
 * One `INFO persistence` + `INFO memory` per master (every master of a Cluster, labelled by
 * `node`), at most once per {@link CACHE_MS} whatever the scrape rate, bounded by a timeout so
 * that a stuck Redis never stalls `/metrics`: it then reports `_up 0` and keeps the last figures.
 * The prefix is the service's (`gateway_redis_…`), so the series cannot clash with a
 * redis_exporter's.
 */
import type { Metrics } from '../service/metrics';
import type { RedisClient } from './redis-client';
import { readInfoHealth, type RedisInfoHealth, type RedisNode } from './redis-durability';

const CACHE_MS = 5_000;
const TIMEOUT_MS = 1_000;

type Node = RedisNode & { options?: { host?: string; port?: number } };

/** The masters behind the clients: each one itself, or every master of a Cluster. */
function mastersOf(clients: readonly RedisClient[]): Node[] {
  return clients.flatMap((redis) =>
    'nodes' in redis && typeof redis.nodes === 'function' ? redis.nodes('master') : [redis as unknown as Node],
  );
}

function nodeName(node: Node, index: number): string {
  const o = node.options;
  return o?.host !== undefined && o.port !== undefined ? `${o.host}:${o.port}` : String(index);
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    promise.finally(() => clearTimeout(timer)),
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error('timeout')), ms);
    }),
  ]);
}

/**
 * Declares `<prefix>_redis_*` gauges on `metrics`, filled at each scrape from `redis`: one
 * connection, or one per server (both Redis roles, core's redis-roles.ts), each labelled by its node.
 */
export function redisHealthMetrics(
  metrics: Metrics,
  redis: RedisClient | readonly RedisClient[],
  prefix: string,
): void {
  const clients = Array.isArray(redis) ? (redis as readonly RedisClient[]) : [redis as RedisClient];
  let last: { at: number; nodes: { node: string; health: RedisInfoHealth | undefined }[] } | undefined;
  let reading: Promise<NonNullable<typeof last>> | undefined;
  const read = async () => {
    const nodes = mastersOf(clients);
    const health = await Promise.all(
      nodes.map((n) => withTimeout(readInfoHealth(n), TIMEOUT_MS).catch(() => undefined)),
    );
    return { at: Date.now(), nodes: nodes.map((n, i) => ({ node: nodeName(n, i), health: health[i] })) };
  };
  /** One read shared by every gauge of a scrape (and by scrapes within CACHE_MS). */
  const current = async () => {
    if (last && Date.now() - last.at < CACHE_MS) return last;
    reading ??= read().finally(() => (reading = undefined));
    return (last = await reading);
  };
  const gauge = (name: string, help: string, value: (h: RedisInfoHealth) => number) =>
    metrics.gauge(`${prefix}_redis_${name}`, help, ['node'] as const, async (g) => {
      for (const { node, health } of (await current()).nodes) if (health) g.set({ node }, value(health));
    });
  metrics.gauge(
    `${prefix}_redis_up`,
    '1 when Redis answered INFO within 1 s at the last read',
    ['node'] as const,
    async (g) => {
      for (const { node, health } of (await current()).nodes) g.set({ node }, health ? 1 : 0);
    },
  );
  gauge('aof_enabled', '1 when Redis writes its append-only file (appendonly yes)', (h) => (h.aof ? 1 : 0));
  gauge('evicting', '1 when maxmemory-policy is not noeviction (keys may be dropped under memory pressure)', (h) =>
    h.maxmemoryPolicy === 'noeviction' ? 0 : 1,
  );
  gauge('memory_used_bytes', 'Memory Redis uses (INFO used_memory)', (h) => h.usedMemoryBytes);
  gauge('maxmemory_bytes', 'Redis maxmemory; 0 means no limit', (h) => h.maxmemoryBytes);
}
