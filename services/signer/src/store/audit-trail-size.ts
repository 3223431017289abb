/**
 * The audit trail's size per chain as a metric, read at each scrape (XLEN, O(1)): the records
 * kept within the retention, about 0.9 KB of Redis memory each (measured with npm run bench
 * signer). Redis runs noeviction: an operator alerts on it before memory runs out, since a full
 * Redis stops every integrator's signing (docs/operations/settlement.md#audit-trail).
 */
import type { Metrics, RedisClient, RedisKeys } from '@pmm/core';

export function auditTrailSizeMetric(metrics: Metrics, redis: RedisClient, keys: RedisKeys, chains: readonly number[]) {
  metrics.gauge(
    'signer_audit_trail_entries',
    'Records in the audit trail by chain (XLEN of its stream; about 0.9 KB of Redis memory each)',
    ['chain'] as const,
    async (gauge) => {
      const lengths = await Promise.allSettled(chains.map((chain) => redis.xlen(keys.audit(chain))));
      // Redis unreachable: the last values stay (the gateway's gateway_redis_up and /readyz say why).
      lengths.forEach((r, i) => r.status === 'fulfilled' && gauge.set({ chain: String(chains[i]) }, r.value));
    },
  );
}
