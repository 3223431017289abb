import request from 'supertest';
import { redisReady } from '@pmm/core';
import type { Gateway } from '@pmm/gateway';
import { call, harness, type Harness } from './support/harness';
import { privateRedis, type PrivateRedis } from '@pmm/testkit';
import { fakeSigner, type FakeSigner } from './support/fake-signer';

let redis: PrivateRedis;
let h: Harness;
let gw: Gateway;
let signer: FakeSigner;

beforeAll(async () => {
  redis = await privateRedis();
  h = await harness(redis.url);
  signer = await fakeSigner();
  gw = await h.gateway({ signerUrl: signer.url, requestTimeoutMs: 4_000 });
});
afterAll(async () => {
  try {
    await redis.start().catch(() => undefined);
    await redisReady(h.redis, 10_000).catch(() => undefined);
    await h.cleanup();
  } finally {
    await redis.stop();
    await signer.close();
  }
});

async function timed(path: string, key: string, method: 'get' | 'post' = 'get') {
  const started = Date.now();
  const req = request(gw.app)[method](path).set('X-API-KEY', key);
  const res = await call(method === 'post' ? req.set('Content-Type', 'application/json').send('{}') : req);
  return { status: res.status, body: res.body as { error?: { code: string } }, ms: Date.now() - started };
}

describe('Redis stopped and started again', () => {
  it('behavior: 503 quickly while Redis is down (no hang, no stale book past 1 s), 200 again once it is back, without restart', async () => {
    let key = await h.apiKey({ id: 'faults' });
    await h.putBook(8453);
    expect((await timed('/v2/price', key)).status).toBe(200);

    await redis.stop();
    const stoppedAt = Date.now();
    // Cached key and book may be served for at most their cache life (500 ms), then 503.
    let last = await timed('/v2/price', key);
    while (last.status === 200 && Date.now() - stoppedAt < 2_000) {
      await new Promise((r) => setTimeout(r, 50));
      last = await timed('/v2/price', key);
    }
    expect(last.status).toBe(503);
    expect(Date.now() - stoppedAt).toBeLessThan(1_000 + 500);
    for (const path of ['/v2/price', '/v1/price', '/v2/price?chainId=56']) {
      const r = await timed(path, key);
      expect({ path, status: r.status, code: r.body.error?.code }).toEqual({
        path,
        status: 503,
        code: 'SERVICE_UNAVAILABLE',
      });
      expect(r.ms).toBeLessThan(1_000);
    }
    const sign = await timed('/v2/swap/sign', key, 'post');
    expect(sign.status).toBe(503);
    expect(sign.ms).toBeLessThan(1_000);

    const metrics = await request(gw.opsApp).get('/metrics');
    expect(metrics.status).toBe(200);
    const ready = await request(gw.opsApp).get('/readyz');
    expect(ready.status).toBe(503);
    expect(ready.body.checks.redis).toMatch(/^fail/);

    // A fresh, empty Redis on the same port (as after a failover without persistence).
    await redis.start();
    await redisReady(h.redis, 10_000);
    key = await h.apiKey({ id: 'faults2' });
    await h.putBook(8453); // waits until the gateway serves it again
    const back = Date.now();
    let status = 0;
    while (status !== 200 && Date.now() - back < 10_000) {
      status = (await timed('/v2/price', key)).status;
      if (status !== 200) await new Promise((r) => setTimeout(r, 100));
    }
    expect(status).toBe(200);
    // The rate limiter's script was lost with the old server: it must be reloaded transparently.
    expect((await timed('/v1/price', key)).status).toBe(200);
    expect((await timed('/v2/swap/sign', key, 'post')).status).toBe(200);
    expect((await request(gw.opsApp).get('/readyz')).status).toBe(200);
  });
});
