/**
 * The signer's integrator cache (src/store/integrator-store.ts) over real Redis: entries are
 * kept until the key store announces a change on `access-updated` (1 s at most, when an
 * announcement is lost), dropped on every
 * (re)connection of the subscriber, and a revoked (disabled) integrator must not sign.
 */
import { randomBytes } from 'node:crypto';
import { createRedis, encodeAccessUpdate, redisKeys, redisReady, type RedisClient, type RedisKeys } from '@pmm/core';
import { IntegratorStore, type IntegratorView } from '../../src';
import { INTERNAL_TOKEN, REDIS_URL, USER, integrator, startFixture, testRegistry } from '../support/fixture';
import request from 'supertest';
import { until } from '@pmm/testkit';

let redis: RedisClient;
let subscriber: RedisClient;
let keys: RedisKeys;
let store: IntegratorStore;
/** Announcements arrive within milliseconds; well under the 1 s a ttl alone would take. */
const ANNOUNCED_WITHIN_MS = 500;

const put = (id: string, extra: Parameters<typeof integrator>[1] = {}) =>
  redis.set(keys.integrator(id), JSON.stringify(integrator(id, extra)));
const announce = (id: string) => redis.publish(keys.accessUpdated(), encodeAccessUpdate({ kind: 'integrator', id }));
const view = async (id: string) => (await store.get(id)) as IntegratorView | undefined;

beforeEach(async () => {
  keys = redisKeys(`pmm-test-${randomBytes(6).toString('hex')}`);
  redis = createRedis(REDIS_URL, { name: 'cache-test' });
  subscriber = createRedis(REDIS_URL, { role: 'subscriber', name: 'cache-test-sub' });
  await Promise.all([redisReady(redis), redisReady(subscriber)]);
  store = new IntegratorStore({ redis, keys, subscriber });
  await store.start();
});
afterEach(async () => {
  await store.stop();
  const found = await redis.keys(`${keys.integrator('')}*`);
  if (found.length > 0) await redis.del(...found);
  redis.disconnect();
  subscriber.disconnect();
});

describe('integrator cache', () => {
  it('behavior: a cached record is served without Redis until the key store announces a change (or 1 s passes)', async () => {
    await put('acme', { whitelist: ['0x01'] });
    expect([...(await view('acme'))!.whitelist]).toEqual(['0x01']);
    expect(store.get('acme')).not.toBeInstanceOf(Promise); // a hit is synchronous
    await put('acme', { whitelist: ['0x02'] }); // written without an announcement
    expect([...(await view('acme'))!.whitelist]).toEqual(['0x01']);
    await announce('acme');
    await until(
      async () => [...(await view('acme'))!.whitelist][0] === '0x02',
      ANNOUNCED_WITHIN_MS,
      'the new whitelist',
      5,
    );
  });

  it('behavior: when an announcement is lost, a change still takes effect within 1 s (subscribed)', async () => {
    let now = 0;
    const clocked = new IntegratorStore({ redis, keys, subscriber, now: () => now });
    await clocked.start();
    try {
      await put('lost');
      expect(((await clocked.get('lost')) as IntegratorView).record.disabled).toBe(false);
      await put('lost', { disabled: true }); // written; its announcement never arrives
      now = 999;
      expect((clocked.get('lost') as IntegratorView).record.disabled).toBe(false);
      now = 1_000;
      expect(((await clocked.get('lost')) as IntegratorView).record.disabled).toBe(true);
    } finally {
      await clocked.stop();
    }
  });

  it('behavior: an announcement for another integrator keeps the entry', async () => {
    await put('acme');
    await view('acme');
    await put('acme', { disabled: true });
    await announce('other');
    await new Promise((r) => setTimeout(r, 50));
    expect((await view('acme'))!.record.disabled).toBe(false);
  });

  it('behavior: a reconnection of the subscriber drops everything (announcements may have been lost)', async () => {
    await put('acme');
    await view('acme');
    await put('acme', { disabled: true }); // as if announced while the subscriber was away
    const ready = new Promise((r) => subscriber.once('ready', r));
    // A dropped connection: ioredis reconnects and resubscribes.
    (subscriber as unknown as { stream: { destroy(): void } }).stream.destroy();
    await ready;
    expect((await view('acme'))!.record.disabled).toBe(true);
  });

  it('behavior: a read that started before an announcement is not cached', async () => {
    await put('acme', { whitelist: ['0x01'] });
    const reading = store.get('acme'); // miss: reads Redis
    store.invalidate('acme'); // the announcement arrives while the read runs
    await reading;
    await put('acme', { whitelist: ['0x02'] });
    expect([...(await view('acme'))!.whitelist]).toEqual(['0x02']);
  });
});

describe('a revoked integrator does not sign', () => {
  it('behavior: disabled through the key store, the next sign request is 401 at once', async () => {
    // The app is built by the fixture, the cache after it (it needs the fixture's prefix).
    const late: { store?: IntegratorStore } = {};
    const f = await startFixture({
      chains: [8453],
      override: (d) => ({ ...d, integrators: { get: (id) => late.store!.get(id) } }),
    });
    const cached = new IntegratorStore({ redis: f.redis, keys: f.keys, subscriber: f.subscriber });
    late.store = cached;
    await cached.start();
    const app = f.app;
    const body = JSON.stringify({
      tokenIn: testRegistry(8453).baseTokens[0]!.address,
      tokenOut: testRegistry(8453).quoteToken.address,
      fee: '30',
      userAddress: USER,
    });
    const sign = () =>
      request(app)
        .post('/v2/swap/sign')
        .set('X-Internal-Token', INTERNAL_TOKEN)
        .set('X-Integrator-Id', 'acme')
        .set('Content-Type', 'application/json')
        .send(body);
    try {
      expect((await sign()).status).toBe(200);
      expect((await sign()).status).toBe(200); // from the cache
      await f.putIntegrator(integrator('acme', { disabled: true }));
      await f.redis.publish(f.keys.accessUpdated(), encodeAccessUpdate({ kind: 'integrator', id: 'acme' }));
      await until(async () => (await sign()).status === 401, ANNOUNCED_WITHIN_MS, 'a 401', 5);
      const res = await sign();
      expect(res.body.error.code).toBe('UNAUTHORIZED');
    } finally {
      await cached.stop();
      await f.close();
    }
  });
});
