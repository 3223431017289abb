/** The book an indexer stored in Redis, read now or waited for. */
import type Redis from 'ioredis';
import type { OrderbookResponse } from '@pmm/protocol';
import { until } from '@pmm/testkit';

export async function readBook(redis: Redis, key: string): Promise<OrderbookResponse | undefined> {
  const raw = await redis.get(key);
  return raw === null ? undefined : (JSON.parse(raw) as OrderbookResponse);
}

/** The stored book once its block is at least `minBlock`. */
export function waitForBook(redis: Redis, key: string, minBlock = 0, timeoutMs = 20_000): Promise<OrderbookResponse> {
  return until(
    async () => {
      const book = await readBook(redis, key);
      return book !== undefined && book.blockNumber >= minBlock && book;
    },
    timeoutMs,
    `a book at block >= ${minBlock}`,
    50,
  );
}
