/**
 * core's AccessCache (the gateway's key cache and the signer's integrator cache) over a real
 * Redis: entry lifetimes, single flight, the invalidation rule, and the subscriber's state.
 * The services' own tests cover what each loader and rule means for a request.
 */
import { randomUUID } from 'node:crypto';
import {
  AccessCache,
  createRedis,
  encodeAccessUpdate,
  redisKeys,
  redisReady,
  type AccessCacheOptions,
  type RedisClient,
  type RedisKeys,
} from '@pmm/core';
import { until } from '@pmm/testkit';

const url = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

let redis: RedisClient;
let subscriber: RedisClient;
let keys: RedisKeys;
let caches: AccessCache<string | undefined>[];

/** A cache whose entries are the Redis string at `<prefix>:v:<key>`; counts its reads. */
function cacheOf(opts: Partial<AccessCacheOptions<string | undefined>> = {}) {
  const reads = { count: 0 };
  const cache = new AccessCache<string | undefined>({
    load: async (key) => {
      reads.count++;
      return (await redis.get(`${keys.accessUpdated()}:v:${key}`)) ?? undefined;
    },
    invalidatedBy: (update) => (update.kind === 'integrator' ? { key: update.id } : 'none'),
    ttlMs: 1_000,
    keys,
    ...opts,
  });
  caches.push(cache);
  return { cache, reads };
}
const put = (key: string, value: string) => redis.set(`${keys.accessUpdated()}:v:${key}`, value);
const announce = (id: string) => redis.publish(keys.accessUpdated(), encodeAccessUpdate({ kind: 'integrator', id }));

beforeEach(async () => {
  keys = redisKeys(`pmm-test-${randomUUID()}`);
  redis = createRedis(url, { name: 'access-cache-test' });
  subscriber = createRedis(url, { role: 'subscriber', name: 'access-cache-test-sub' });
  caches = [];
  await Promise.all([redisReady(redis), redisReady(subscriber)]);
});
afterEach(async () => {
  await Promise.all(caches.map((c) => c.stop()));
  const found = await redis.keys(`${keys.accessUpdated()}*`);
  if (found.length > 0) await redis.del(...found);
  redis.disconnect();
  subscriber.disconnect();
});

describe('AccessCache', () => {
  it('behavior: a hit is synchronous; an entry lives ttl from the START of its read; misses share one read', async () => {
    let now = 1_000;
    await put('a', 'one');
    const { cache, reads } = cacheOf({ ttlMs: 500, now: () => now });
    const first = cache.get('a');
    const second = cache.get('a');
    expect(first).toBeInstanceOf(Promise);
    expect(second).toBe(first);
    now = 1_300; // the read "took" 300 ms
    expect(await first).toBe('one');
    expect(reads.count).toBe(1);
    await put('a', 'two');
    now = 1_499;
    expect(cache.get('a')).toBe('one');
    now = 1_500; // 500 ms after the read started
    expect(await cache.get('a')).toBe('two');
    expect(reads.count).toBe(2);
  });

  it('behavior: an unknown key is cached too (no Redis read per request for it)', async () => {
    const { cache, reads } = cacheOf();
    expect(await cache.get('missing')).toBeUndefined();
    expect(cache.get('missing')).toBeUndefined();
    expect(reads.count).toBe(1);
  });

  it('boundary: ttl 0 reads Redis on every request', async () => {
    await put('a', 'one');
    const { cache, reads } = cacheOf({ ttlMs: 0 });
    await cache.get('a');
    await cache.get('a');
    expect(reads.count).toBe(2);
  });

  it('error: a failed read rejects, is not cached, and the next request reads again', async () => {
    let fail = true;
    const cache = new AccessCache<string>({
      load: async () => {
        if (fail) throw new Error('redis down');
        return 'ok';
      },
      invalidatedBy: () => 'all',
      ttlMs: 1_000,
      keys,
    });
    await expect(cache.get('a')).rejects.toThrow('redis down');
    fail = false;
    expect(await cache.get('a')).toBe('ok');
  });

  it('behavior: a read that started before an invalidation is not cached', async () => {
    await put('a', 'one');
    const { cache } = cacheOf();
    const reading = cache.get('a');
    cache.invalidate('a');
    expect(await reading).toBe('one');
    await put('a', 'two');
    expect(await cache.get('a')).toBe('two');
  });

  it('behavior: an announcement drops what the rule names, at once, and nothing else', async () => {
    await put('a', 'one');
    await put('b', 'one');
    const { cache } = cacheOf({ subscriber, now: () => 0 });
    await cache.start();
    await cache.get('a');
    await cache.get('b');
    await put('a', 'two');
    await put('b', 'two');
    await redis.publish(keys.accessUpdated(), encodeAccessUpdate({ kind: 'apikey', hash: 'a' })); // rule: 'none'
    await announce('a');
    await until(async () => (await cache.get('a')) === 'two', 2_000, 'the announced entry to be re-read', 5);
    expect(cache.get('b')).toBe('one');
  });

  it('behavior: two replicas on their own subscribers both drop the entry on one announcement', async () => {
    const other = createRedis(url, { role: 'subscriber', name: 'access-cache-test-sub-2' });
    try {
      await redisReady(other);
      await put('a', 'one');
      const replicas = [cacheOf({ subscriber, now: () => 0 }), cacheOf({ subscriber: other, now: () => 0 })];
      for (const { cache } of replicas) {
        await cache.start();
        await cache.get('a');
      }
      await put('a', 'two');
      await announce('a');
      for (const { cache } of replicas)
        await until(async () => (await cache.get('a')) === 'two', 2_000, 'each replica', 5);
    } finally {
      other.disconnect();
    }
  });

  it('behavior: entries live ttlMs subscribed or not (the bound on a lost announcement); losing the subscriber drops everything', async () => {
    let now = 0;
    await put('a', 'one');
    const { cache, reads } = cacheOf({ subscriber, ttlMs: 1_000, now: () => now });
    await cache.start();
    await cache.get('a');
    await put('a', 'lost'); // written, its announcement lost
    now = 999;
    expect(cache.get('a')).toBe('one');
    now = 1_000;
    expect(await cache.get('a')).toBe('lost'); // subscribed, yet no longer than the ttl
    const back = new Promise((r) => subscriber.once('ready', r));
    const closed = new Promise((r) => subscriber.once('close', r));
    (subscriber as unknown as { stream: { destroy(): void } }).stream.destroy();
    await closed;
    await put('a', 'two'); // as if announced while the subscriber was away
    expect(cache.get('a')).toBeInstanceOf(Promise); // the loss dropped everything
    await back;
    expect(await cache.get('a')).toBe('two');
    expect(reads.count).toBeGreaterThanOrEqual(2);
  });

  it('default: without a subscriber start() and stop() do nothing and the ttl applies', async () => {
    let now = 0;
    await put('a', 'one');
    const { cache } = cacheOf({ ttlMs: 1_000, now: () => now });
    await cache.start();
    await cache.get('a');
    await put('a', 'two');
    now = 1_000;
    expect(await cache.get('a')).toBe('two');
  });
});
