/**
 * What the sign path costs Redis, for the capacity plan (used by gateway.bench.ts): Redis's
 * own CPU, read from INFO around each load (exact only when the Redis serves the bench alone,
 * as `npm run bench`'s private one does), the append-only file's growth, and the memory the
 * audit trail holds per signature: MEMORY USAGE of the chain's audit stream over its records,
 * and of the day's signature index over its entries (one per distinct signature: identical
 * quotes asked in the same second share one, and the bench's load repeats one body, so the
 * index is measured where it holds many distinct signatures).
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
  const stream = Number((await redis.call('MEMORY', 'USAGE', keys.audit(chainId), 'SAMPLES', '0')) ?? 0);
  const now = await aofMark(redis);
  const n = Math.max(1, records);
  return {
    records,
    streamBytes: stream / n,
    aofBytes: now.rewrites === since.rewrites ? (now.bytes - since.bytes) / n : NaN,
  };
}

/** Bytes per entry of today's signature index of `chainId` (every record here is today's). */
export async function signatureIndexEntryBytes(redis: RedisClient, prefix: string, chainId: number): Promise<number> {
  const key = redisKeys(prefix).auditSignatures(chainId, auditDay(Math.floor(Date.now() / 1000)));
  const bytes = Number((await redis.call('MEMORY', 'USAGE', key, 'SAMPLES', '0')) ?? 0);
  return bytes / Math.max(1, await redis.hlen(key));
}

/** Bytes a day at `perSecond` signatures, `bytesPerRecord` each. */
export function bytesPerDay(bytesPerRecord: number, perSecond: number): number {
  return bytesPerRecord * perSecond * DAY_SECONDS;
}
