/**
 * What the sign path costs Redis, for the capacity plan (used by gateway.bench.ts): Redis's
 * own CPU, read from INFO around each load (exact only when the Redis serves the bench alone,
 * as `npm run bench`'s private one does), the append-only file's growth, and the memory the
 * audit trail holds per signature (MEMORY USAGE of the chain's audit stream and of the day's
 * signature index, divided by the records in the stream).
 */
import { auditDay, redisKeys, type RedisClient } from '@pmm/core';

const DAY_SECONDS = 86_400;

function field(info: string, name: string): number {
  return Number(new RegExp(`^${name}:([0-9.]+)`, 'm').exec(info)?.[1] ?? NaN);
}

/** Redis's CPU seconds so far (user + system, main thread and children). */
export async function redisCpuSeconds(redis: RedisClient): Promise<number> {
  const info = await redis.info('cpu');
  return field(info, 'used_cpu_user') + field(info, 'used_cpu_sys');
}

export interface AofMark {
  /** Bytes of the append-only file (NaN when AOF is off). */
  bytes: number;
  /** Rewrites so far: a rewrite between two marks shrinks the file, so their difference means nothing. */
  rewrites: number;
}

export async function aofMark(redis: RedisClient): Promise<AofMark> {
  const info = await redis.info('persistence');
  const enabled = field(info, 'aof_enabled') === 1;
  return {
    bytes: enabled ? field(info, 'aof_current_size') : NaN,
    rewrites: field(info, 'aof_rewrites'),
  };
}

export interface AuditFootprint {
  records: number;
  /** Bytes per record in the audit stream. */
  streamBytes: number;
  /** Bytes per record in the signature index (today's hash; every record here is today's). */
  indexBytes: number;
  /** Append-only file bytes per record since `since` (NaN without AOF or after a rewrite). */
  aofBytes: number;
}

export async function auditFootprint(
  redis: RedisClient,
  prefix: string,
  chainId: number,
  since: AofMark,
): Promise<AuditFootprint> {
  const keys = redisKeys(prefix);
  const records = await redis.xlen(keys.audit(chainId));
  const usage = async (key: string) => Number((await redis.call('MEMORY', 'USAGE', key, 'SAMPLES', '0')) ?? 0);
  const stream = await usage(keys.audit(chainId));
  const index = await usage(keys.auditSignatures(chainId, auditDay(Math.floor(Date.now() / 1000))));
  const now = await aofMark(redis);
  const n = Math.max(1, records);
  return {
    records,
    streamBytes: stream / n,
    indexBytes: index / n,
    aofBytes: now.rewrites === since.rewrites ? (now.bytes - since.bytes) / n : NaN,
  };
}

/** Bytes a day at `perSecond` signatures, `bytesPerRecord` each. */
export function bytesPerDay(bytesPerRecord: number, perSecond: number): number {
  return bytesPerRecord * perSecond * DAY_SECONDS;
}
