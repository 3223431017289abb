import request from 'supertest';
import { AHEAD_FROM, RateLimiter, batchFor, type Gateway } from '@pmm/gateway';
import { until } from '@pmm/testkit';
import { call, harness, type Harness } from '../support/harness';

let h: Harness;
let a: Gateway;
let b: Gateway;

beforeAll(async () => {
  h = await harness();
  // Two replicas of the gateway sharing one Redis.
  a = await h.gateway();
  b = await h.gateway();
  await h.putBook(8453);
});
afterAll(() => h.cleanup());

/** Waits until at least `margin` seconds remain in the current window of `seconds`. */
async function awayFromBoundary(seconds: number, margin = 2): Promise<void> {
  const left = seconds - ((Date.now() / 1000) % seconds);
  if (left < margin) await new Promise((r) => setTimeout(r, left * 1000 + 50));
}

describe('rate limit', () => {
  it('behavior: the limit is shared by two gateway instances; the excess is 429 with Retry-After and RateLimit headers', async () => {
    await awayFromBoundary(60);
    const key = await h.apiKey({ rateLimit: { requests: 5, windowSeconds: 60 } });
    const statuses: number[] = [];
    const remaining: string[] = [];
    for (let i = 0; i < 8; i++) {
      const gw = i % 2 === 0 ? a : b;
      const res = await call(request(gw.app).get('/v2/price').set('X-API-KEY', key));
      statuses.push(res.status);
      remaining.push(String(res.headers['ratelimit-remaining']));
      expect(res.headers['ratelimit-limit']).toBe('5');
      const reset = Number(res.headers['ratelimit-reset']);
      expect(reset).toBeGreaterThanOrEqual(1);
      expect(reset).toBeLessThanOrEqual(60);
      if (res.status === 429) {
        expect(res.body).toEqual({
          error: {
            code: 'RATE_LIMITED',
            message: `rate limit of 5 requests per window exceeded; retry in ${reset} s`,
            requestId: res.headers['x-request-id'],
          },
        });
        expect(res.headers['retry-after']).toBe(String(reset));
      }
    }
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429, 429, 429]);
    expect(remaining).toEqual(['4', '3', '2', '1', '0', '0', '0', '0']);
  });

  it('behavior: concurrent requests through both instances never exceed the limit', async () => {
    await awayFromBoundary(60);
    const key = await h.apiKey({ rateLimit: { requests: 20, windowSeconds: 60 } });
    const all = await Promise.all(
      Array.from({ length: 60 }, (_, i) =>
        call(
          request(i % 2 ? a.app : b.app)
            .get('/v2/price')
            .set('X-API-KEY', key),
        ),
      ),
    );
    expect(all.filter((r) => r.status === 200)).toHaveLength(20);
    expect(all.filter((r) => r.status === 429)).toHaveLength(40);
  });

  it('behavior: the limit is per integrator: its keys share it, other integrators are not affected', async () => {
    await awayFromBoundary(60);
    const k1 = await h.apiKey({ id: 'shared', rateLimit: { requests: 2, windowSeconds: 60 } });
    const { apiKey: k2 } = await h.store.issueKey('shared');
    const other = await h.apiKey({ rateLimit: { requests: 2, windowSeconds: 60 } });
    const get = (k: string) => call(request(a.app).get('/v2/price').set('X-API-KEY', k));
    expect((await get(k1)).status).toBe(200);
    expect((await get(k2)).status).toBe(200);
    expect((await get(k1)).status).toBe(429);
    expect((await get(k2)).status).toBe(429);
    expect((await get(other)).status).toBe(200);
  });

  it('behavior: a new window admits requests again', async () => {
    await awayFromBoundary(1, 0.6);
    const key = await h.apiKey({ rateLimit: { requests: 1, windowSeconds: 1 } });
    const get = () => call(request(a.app).get('/v2/price').set('X-API-KEY', key));
    expect((await get()).status).toBe(200);
    const limited = await get();
    expect(limited.status).toBe(429);
    expect(limited.headers['retry-after']).toBe('1');
    await new Promise((r) => setTimeout(r, 1_000));
    expect((await get()).status).toBe(200);
  });

  it('behavior: 0 in the record means the configured default limit', async () => {
    await awayFromBoundary(60);
    const gw = await h.gateway({ defaultRateLimit: 3, defaultRateWindowSeconds: 60 });
    const key = await h.apiKey({ rateLimit: { requests: 0, windowSeconds: 0 } });
    const res = await call(request(gw.app).get('/v2/price').set('X-API-KEY', key));
    expect(res.headers['ratelimit-limit']).toBe('3');
  });

  it('error: 429 comes after 401 and before 413 and validation', async () => {
    await awayFromBoundary(60);
    const key = await h.apiKey({ rateLimit: { requests: 1, windowSeconds: 60 } });
    expect((await call(request(a.app).get('/v2/price').set('X-API-KEY', key))).status).toBe(200);
    const big = await call(
      request(a.app)
        .post('/v2/swap/sign')
        .set('X-API-KEY', key)
        .set('Content-Type', 'application/json')
        .send('x'.repeat(20_000)),
    );
    expect(big.status).toBe(429);
    const bad = await call(request(a.app).get('/v2/price?chainId=abc').set('X-API-KEY', key));
    expect(bad.status).toBe(429);
    const unauth = await call(request(a.app).get('/v2/price').set('X-API-KEY', 'pmm_wrong'));
    expect(unauth.status).toBe(401);
  });
});

describe('RateLimiter, batched reservations (limits above 1000 per window)', () => {
  it('behavior: two limiters reserving in batches admit exactly the limit in total', async () => {
    const limit = 5_000;
    expect(batchFor(limit)).toBe(5);
    const now = () => 1_700_000_000_000; // fixed window
    const l1 = new RateLimiter(h.redis, h.prefix, { now });
    const l2 = new RateLimiter(h.redis, h.prefix, { now });
    let admitted = 0;
    const tasks: Promise<void>[] = [];
    for (let i = 0; i < 6_000; i++) {
      const limiter = i % 3 === 0 ? l2 : l1;
      tasks.push(
        Promise.resolve(limiter.consume('batch-int', limit, 60)).then((d) => {
          if (d.allowed) admitted++;
        }),
      );
      if (i % 50 === 0) await Promise.all(tasks.splice(0));
    }
    await Promise.all(tasks);
    // Never more than the limit; at most (batch − 1) per limiter lost to unspent reservations.
    expect(admitted).toBeLessThanOrEqual(limit);
    expect(admitted).toBeGreaterThanOrEqual(limit - 2 * (batchFor(limit) - 1));
    expect(
      Number(await h.redis.get(h.keys.rateLimit('batch-int', now() / 1000 - ((now() / 1000) % 60)))),
    ).toBeLessThanOrEqual(limit);
  });

  it('behavior: an exact limit from AHEAD_FROM a window keeps one token reserved ahead: a request after the first is answered without waiting for Redis; two limiters admit at most the limit, at least one per limiter fewer', async () => {
    const limit = 300;
    expect([batchFor(limit), limit >= AHEAD_FROM]).toEqual([1, true]);
    const now = () => 1_700_000_000_000;
    const l1 = new RateLimiter(h.redis, h.prefix, { now });
    const l2 = new RateLimiter(h.redis, h.prefix, { now });
    const counter = h.keys.rateLimit('ahead-int', now() / 1000 - ((now() / 1000) % 60));
    // The first request waits for its own reservation; the token for the next follows it.
    expect(await l1.consume('ahead-int', limit, 60)).toMatchObject({ allowed: true });
    await until(async () => Number(await h.redis.get(counter)) === 2, 2_000, 'the token reserved ahead');
    const second = l1.consume('ahead-int', limit, 60);
    expect(second).not.toBeInstanceOf(Promise);
    expect(second).toMatchObject({ allowed: true });
    // Both limiters to the end of the window, one request at a time each.
    let admitted = 2;
    for (let i = 0; i < 400; i++) {
      const d = await l1.consume('ahead-int', limit, 60);
      const e = await l2.consume('ahead-int', limit, 60);
      admitted += Number(d.allowed) + Number(e.allowed);
    }
    expect(admitted).toBeLessThanOrEqual(limit);
    expect(admitted).toBeGreaterThanOrEqual(limit - 2);
    expect(Number(await h.redis.get(counter))).toBe(limit);
  });

  it('behavior: an exact limit below AHEAD_FROM reserves each request itself: two limiters admit exactly the limit', async () => {
    const limit = AHEAD_FROM - 1;
    const now = () => 1_700_000_000_000;
    const l1 = new RateLimiter(h.redis, h.prefix, { now });
    const l2 = new RateLimiter(h.redis, h.prefix, { now });
    let admitted = 0;
    for (let i = 0; i < limit; i++) {
      const d = await l1.consume('exact-int', limit, 60);
      const e = await l2.consume('exact-int', limit, 60);
      admitted += Number(d.allowed) + Number(e.allowed);
    }
    expect(admitted).toBe(limit);
  });

  it('behavior: the counter key expires after its window', async () => {
    const now = () => 1_700_000_000_000;
    const limiter = new RateLimiter(h.redis, h.prefix, { now });
    await limiter.consume('ttl-int', 10, 60);
    const key = h.keys.rateLimit('ttl-int', 1_700_000_000 - (1_700_000_000 % 60));
    const ttl = await h.redis.pttl(key);
    // Until the window's end plus 1 s of slack, from the limiter's clock.
    const expected = Math.floor(now() / 60_000) * 60_000 + 60_000 - now() + 1_000;
    expect(ttl).toBeGreaterThan(expected - 1_000);
    expect(ttl).toBeLessThanOrEqual(expected);
  });
});
