/**
 * Redis for the indexer tests: the shared server from REDIS_URL with a random key prefix per
 * test file, cleaned up afterwards. (Private servers for fault tests: @pmm/testkit.)
 */
import { randomBytes } from 'node:crypto';
import Redis from 'ioredis';

export const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

export function randomPrefix(): string {
  return `test-indexer-${randomBytes(6).toString('hex')}`;
}

/** Deletes every key under `prefix:` (SCAN, never KEYS). */
export async function deleteKeys(redis: Redis, prefix: string): Promise<void> {
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
    cursor = next;
    if (keys.length > 0) await redis.del(...keys);
  } while (cursor !== '0');
}
