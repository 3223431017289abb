import type Redis from 'ioredis';
import type { OrderbookResponse } from '@pmm/protocol';

/** Polls `check` every 50 ms until it returns a value (not undefined) or `timeoutMs` passes. */
export async function waitFor<T>(what: string, timeoutMs: number, check: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

export async function readBook(redis: Redis, key: string): Promise<OrderbookResponse | undefined> {
  const raw = await redis.get(key);
  return raw === null ? undefined : (JSON.parse(raw) as OrderbookResponse);
}

/** The stored book once its block is at least `minBlock`. */
export function waitForBook(redis: Redis, key: string, minBlock = 0, timeoutMs = 20_000): Promise<OrderbookResponse> {
  return waitFor(`a book at block >= ${minBlock}`, timeoutMs, async () => {
    const book = await readBook(redis, key);
    return book && book.blockNumber >= minBlock ? book : undefined;
  });
}
