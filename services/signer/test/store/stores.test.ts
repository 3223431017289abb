/**
 * The Redis-backed stores against a real Redis (random prefix): the pair registry cache
 * (initial load, update channel, reconnect-free periodic refresh, malformed and absent keys)
 * and the integrator store (ttl cache, shared misses, malformed records).
 */
import { randomBytes } from 'node:crypto';
import { createLogger, createRedis, redisKeys, redisReady, type RedisClient } from '@pmm/core';
import { MalformedIntegratorError } from '@pmm/protocol';
import { IntegratorStore, PairRegistryCache, integratorView } from '../../src';
import { REDIS_URL, USER, integrator, testRegistry } from '../support/fixture';

const logger = createLogger({ service: 'signer-test', silent: true });
const prefix = `pmm-test-${randomBytes(6).toString('hex')}`;
const keys = redisKeys(prefix);
let redis: RedisClient;
let subscriber: RedisClient;

beforeAll(async () => {
  redis = createRedis(REDIS_URL, { role: 'command', name: 'stores-test' });
  subscriber = createRedis(REDIS_URL, { role: 'subscriber', name: 'stores-test-sub' });
  await Promise.all([redisReady(redis), redisReady(subscriber)]);
});

afterAll(async () => {
  const found = await redis.keys(`${prefix}:*`);
  if (found.length > 0) await redis.del(...found);
  await Promise.allSettled([redis.quit(), subscriber.quit()]);
});

async function waitFor(cond: () => boolean, timeoutMs = 5_000): Promise<void> {
  const start = Date.now();
  while (!cond()) {
    if (Date.now() - start > timeoutMs) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('PairRegistryCache', () => {
  it('behavior: loads each chain at start; a chain without a key stays undefined', async () => {
    await redis.set(keys.pairs(8453), JSON.stringify(testRegistry(8453)));
    await redis.del(keys.pairs(56));
    const cache = new PairRegistryCache({ redis, subscriber, keys, chains: [8453, 56], logger, refreshIntervalMs: 0 });
    await cache.start();
    try {
      expect(cache.get(8453)).toEqual(testRegistry(8453));
      expect(cache.get(56)).toBeUndefined();
      expect(cache.get(4663)).toBeUndefined();
    } finally {
      await cache.close();
    }
  });

  it('behavior: a "pairs" message on the chain channel reloads that chain; "book" messages do not', async () => {
    const v1 = testRegistry(56);
    await redis.set(keys.pairs(56), JSON.stringify(v1));
    const cache = new PairRegistryCache({ redis, subscriber, keys, chains: [56], logger, refreshIntervalMs: 0 });
    await cache.start();
    try {
      const v2 = { ...v1, blockNumber: 200, baseTokens: v1.baseTokens.slice(0, 1) };
      await redis.set(keys.pairs(56), JSON.stringify(v2));
      await redis.publish(keys.updates(56), JSON.stringify({ type: 'book', chainId: 56, blockNumber: 200 }));
      await new Promise((r) => setTimeout(r, 150));
      expect(cache.get(56)?.blockNumber).toBe(100);
      await redis.publish(keys.updates(56), JSON.stringify({ type: 'pairs', chainId: 56, blockNumber: 200 }));
      await waitFor(() => cache.get(56)?.blockNumber === 200);
      expect(cache.get(56)?.baseTokens).toHaveLength(1);
    } finally {
      await cache.close();
    }
  });

  it('behavior: the periodic refresh picks up a change without any message', async () => {
    await redis.set(keys.pairs(4663), JSON.stringify(testRegistry(4663)));
    const cache = new PairRegistryCache({ redis, subscriber, keys, chains: [4663], logger, refreshIntervalMs: 100 });
    await cache.start();
    try {
      await redis.set(keys.pairs(4663), JSON.stringify({ ...testRegistry(4663), blockNumber: 300 }));
      await waitFor(() => cache.get(4663)?.blockNumber === 300);
    } finally {
      await cache.close();
    }
  });

  it('behavior: after the subscriber reconnects, every chain is re-read (pub/sub messages may have been lost)', async () => {
    await redis.set(keys.pairs(56), JSON.stringify(testRegistry(56)));
    const sub = createRedis(REDIS_URL, { role: 'subscriber', name: 'stores-test-sub-2' });
    const cache = new PairRegistryCache({ redis, subscriber: sub, keys, chains: [56], logger, refreshIntervalMs: 0 });
    await cache.start();
    try {
      await redis.set(keys.pairs(56), JSON.stringify({ ...testRegistry(56), blockNumber: 400 }));
      sub.disconnect(true);
      await waitFor(() => cache.get(56)?.blockNumber === 400);
    } finally {
      await cache.close();
      await sub.quit();
    }
  });

  it('behavior: a read that failed because the command connection was not ready yet is redone once it is', async () => {
    await redis.set(keys.pairs(8453), JSON.stringify(testRegistry(8453)));
    // Fail-fast client, used before it has connected: the first GET is rejected at once.
    const fresh = createRedis(REDIS_URL, { role: 'command', name: 'stores-test-fresh' });
    const cache = new PairRegistryCache({
      redis: fresh,
      subscriber,
      keys,
      chains: [8453],
      logger,
      refreshIntervalMs: 0,
    });
    try {
      await cache.start();
      await waitFor(() => cache.get(8453) !== undefined);
    } finally {
      await cache.close();
      await fresh.quit();
    }
  });

  it('behavior: a malformed registry keeps the previous one; a deleted key removes it (503 again)', async () => {
    await redis.set(keys.pairs(8453), JSON.stringify(testRegistry(8453)));
    const cache = new PairRegistryCache({ redis, subscriber, keys, chains: [8453], logger, refreshIntervalMs: 0 });
    await cache.start();
    try {
      for (const bad of [
        'not json',
        JSON.stringify({ ...testRegistry(8453), chainId: 56 }),
        JSON.stringify({ ...testRegistry(8453), quoteToken: null }),
        // Decimals out of range (a node's lie the indexer let through) would scale every amount.
        JSON.stringify({ ...testRegistry(8453), quoteToken: { ...testRegistry(8453).quoteToken, decimals: 77 } }),
        JSON.stringify({ ...testRegistry(8453), quoteToken: { ...testRegistry(8453).quoteToken, decimals: 6.5 } }),
      ]) {
        await redis.set(keys.pairs(8453), bad);
        expect(await cache.refresh(8453)).toBe(false);
        expect(cache.get(8453)).toEqual(testRegistry(8453));
      }
      await redis.del(keys.pairs(8453));
      expect(await cache.refresh(8453)).toBe(true);
      expect(cache.get(8453)).toBeUndefined();
    } finally {
      await cache.close();
    }
  });

  it('behavior: close() unsubscribes (later messages are ignored)', async () => {
    await redis.set(keys.pairs(56), JSON.stringify(testRegistry(56)));
    const cache = new PairRegistryCache({ redis, subscriber, keys, chains: [56], logger, refreshIntervalMs: 0 });
    await cache.start();
    await cache.close();
    await redis.set(keys.pairs(56), JSON.stringify({ ...testRegistry(56), blockNumber: 999 }));
    await redis.publish(keys.updates(56), JSON.stringify({ type: 'pairs', chainId: 56, blockNumber: 999 }));
    await new Promise((r) => setTimeout(r, 150));
    expect(cache.get(56)?.blockNumber).toBe(100);
  });
});

describe('IntegratorStore', () => {
  it('behavior: reads a record and prepares lowercase whitelist, chain set and originRate overrides', async () => {
    const record = integrator('store-a', { whitelist: [USER], chains: [56], originRate: { '56': '99' } });
    await redis.set(keys.integrator('store-a'), JSON.stringify(record));
    const store = new IntegratorStore({ redis, keys });
    const view = await store.get('store-a');
    expect(view?.record).toEqual({ ...record, whitelist: [USER.toLowerCase()] });
    expect([...(view?.whitelist ?? [])]).toEqual([USER.toLowerCase()]);
    expect([...(view?.chains ?? [])]).toEqual([56]);
    expect(view?.originRates.get(56)).toBe(99n);
    expect(await store.get('store-missing')).toBeUndefined();
  });

  it('behavior: caches for ttlMs, then re-reads; concurrent misses share one read', async () => {
    let now = 1_000;
    await redis.set(keys.integrator('store-b'), JSON.stringify(integrator('store-b')));
    const store = new IntegratorStore({ redis, keys, ttlMs: 1_000, now: () => now });
    const [a, b] = await Promise.all([store.get('store-b'), store.get('store-b')]);
    expect(a).toBe(b);
    await redis.set(keys.integrator('store-b'), JSON.stringify(integrator('store-b', { disabled: true })));
    now += 999;
    expect((await store.get('store-b'))?.record.disabled).toBe(false);
    now += 1;
    expect((await store.get('store-b'))?.record.disabled).toBe(true);
  });

  it('error: a malformed record or override is a MalformedIntegratorError naming the field, not the value', () => {
    expect(() => integratorView('x', 'nope')).toThrow(new MalformedIntegratorError('x', 'not JSON'));
    expect(() => integratorView('x', JSON.stringify({ ...integrator('x'), whitelist: 'all' }))).toThrow(
      'integrator x: malformed record: whitelist',
    );
    const badRate = JSON.stringify(integrator('x', { originRate: { '56': '-1' } }));
    expect(() => integratorView('x', badRate)).toThrow('integrator x: malformed record: originRate.56');
    const tooBig = JSON.stringify(integrator('x', { originRate: { '56': (1n << 256n).toString() } }));
    expect(() => integratorView('x', tooBig)).toThrow('originRate.56');
  });
});
