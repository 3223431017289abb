import { ApiKeyCache, BookCache, type ApiKeyStore, type ResolvedApiKey } from '@pmm/gateway';
import { encodeChainUpdate, redisKeys, type RedisClient } from '@pmm/core';

const resolved = (id: string): ResolvedApiKey => ({
  key: { integratorId: id, keyId: 'k', createdAt: 0, disabled: false },
  integrator: {
    id,
    name: id,
    whitelist: [],
    chains: [],
    rateLimit: { requests: 0, windowSeconds: 0 },
    disabled: false,
  },
});

describe('ApiKeyCache', () => {
  it('behavior: an entry lives ttl from the START of its read, and concurrent misses share one read', async () => {
    let now = 1_000;
    let reads = 0;
    let release: (v: ResolvedApiKey | undefined) => void = () => undefined;
    const store = {
      lookupHash: () => (reads++, new Promise<ResolvedApiKey | undefined>((r) => (release = r))),
    } as unknown as ApiKeyStore;
    const cache = new ApiKeyCache({ store, ttlMs: 500, keys: redisKeys('test'), now: () => now });
    const a = cache.get('h');
    const b = cache.get('h');
    expect(reads).toBe(1);
    now = 1_300; // the read took 300 ms
    release(resolved('x'));
    expect(await a).toEqual(resolved('x'));
    expect(await b).toEqual(resolved('x'));
    now = 1_499;
    expect(cache.get('h')).toEqual(resolved('x')); // synchronous hit
    now = 1_500; // 500 ms after the read started: expired even though it landed at 1 300
    const c = cache.get('h');
    expect(c).toBeInstanceOf(Promise);
    expect(reads).toBe(2);
  });

  it('error: a ttl above one second is refused', () => {
    expect(() => new ApiKeyCache({ store: {} as ApiKeyStore, ttlMs: 1_001, keys: redisKeys('test') })).toThrow(
      'at most 1000 ms',
    );
  });
});

describe('BookCache', () => {
  function fakeRedis(values: Map<string, string | null>) {
    const pending: (() => void)[] = [];
    let hold = false;
    const redis = {
      get: (key: string) =>
        new Promise<string | null>((resolve) => {
          const answer = values.get(key) ?? null; // value at the moment the read STARTS
          if (hold) pending.push(() => resolve(answer));
          else resolve(answer);
        }),
    } as unknown as RedisClient;
    return { redis, hold: (h: boolean) => (hold = h), flush: () => pending.splice(0).forEach((f) => f()) };
  }

  it('behavior: a read that started before an update notice is not cached', async () => {
    const values = new Map<string, string | null>([
      ['p:{56}:book', '{"chainId":56,"blockNumber":1,"blockTime":1,"pairs":[]}'],
    ]);
    const r = fakeRedis(values);
    const handlers: ((channel: string, message: string) => void)[] = [];
    const subscriber = {
      on: (ev: string, fn: (channel: string, message: string) => void) => ev === 'message' && handlers.push(fn),
      off: () => undefined,
      subscribe: async () => 1,
      status: 'ready',
    } as unknown as RedisClient;
    const now = 0;
    const cache = new BookCache({
      redis: r.redis,
      subscriber,
      prefix: 'p',
      chains: [56],
      ttlMs: 1_000,
      now: () => now,
    });
    await cache.start();
    r.hold(true);
    const first = cache.get(56) as Promise<unknown>;
    // The indexer writes block 2 and announces it while the first read is in flight.
    values.set('p:{56}:book', '{"chainId":56,"blockNumber":2,"blockTime":2,"pairs":[]}');
    handlers.forEach((h) => h('p:{56}:book-updated', encodeChainUpdate({ type: 'book', chainId: 56, blockNumber: 2 })));
    r.hold(false);
    const second = await cache.get(56);
    r.flush();
    await first;
    expect((second as { blockNumber: number }).blockNumber).toBe(2);
    // The late answer of the first read (block 1) did not replace block 2 in the cache.
    expect((cache.get(56) as { blockNumber: number }).blockNumber).toBe(2);
  });
});
