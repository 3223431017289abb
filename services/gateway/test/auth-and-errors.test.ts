import request from 'supertest';
import type { Gateway } from '@pmm/gateway';
import { call, harness, type Harness } from './support/harness';

let h: Harness;
let gw: Gateway;

beforeAll(async () => {
  h = await harness();
  gw = await h.gateway();
  await h.putBook(8453);
});
afterAll(() => h.cleanup());

const ROUTES: [method: 'get' | 'post', path: string][] = [
  ['get', '/v2/price'],
  ['post', '/v2/swap/sign'],
  ['get', '/v2/openapi.json'],
  ['get', '/v1/price'],
  ['post', '/v1/swap/sign'],
];

function envelope(res: request.Response, code: string, message: string) {
  expect(res.body).toEqual({ error: { code, message, requestId: res.headers['x-request-id'] } });
}

describe('authentication', () => {
  it.each(ROUTES)('error: %s %s without X-API-KEY is 401 UNAUTHORIZED', async (method, path) => {
    const res = await call(request(gw.app)[method](path));
    expect(res.status).toBe(401);
    envelope(res, 'UNAUTHORIZED', 'X-API-KEY: missing API key header');
  });

  it.each(ROUTES)('error: %s %s with an unknown key is 401, before any validation', async (method, path) => {
    // A body over the size limit and a malformed chainId: the key is checked first.
    const req = request(gw.app)[method](`${path}?chainId=abc`).set('X-API-KEY', 'pmm_not-a-real-key');
    const res = await call(
      method === 'post' ? req.set('Content-Type', 'application/json').send('x'.repeat(20_000)) : req,
    );
    expect(res.status).toBe(401);
    envelope(res, 'UNAUTHORIZED', 'X-API-KEY: invalid, disabled or revoked API key');
    expect(res.headers['ratelimit-limit']).toBeUndefined();
  });

  it('error: an empty or oversized key header is 401', async () => {
    expect((await call(request(gw.app).get('/v2/price').set('X-API-KEY', ''))).status).toBe(401);
    expect((await call(request(gw.app).get('/v2/price').set('X-API-KEY', 'k'.repeat(300)))).status).toBe(401);
  });

  it('behavior: a valid key is accepted; the key is case-sensitive', async () => {
    const key = await h.apiKey();
    expect((await call(request(gw.app).get('/v2/price').set('X-API-KEY', key))).status).toBe(200);
    const flipped = key.slice(0, -1) + (key.endsWith('a') ? 'b' : 'a');
    expect((await call(request(gw.app).get('/v2/price').set('X-API-KEY', flipped))).status).toBe(401);
  });

  it('error: a disabled key, a disabled integrator and a revoked key are 401 within one second', async () => {
    const check = async (key: string) => (await call(request(gw.app).get('/v2/price').set('X-API-KEY', key))).status;
    const waitFor401 = async (key: string) => {
      const started = Date.now();
      while ((await check(key)) !== 401) {
        if (Date.now() - started > 1_500) break;
        await new Promise((r) => setTimeout(r, 20));
      }
      return Date.now() - started;
    };
    const a = await h.apiKey({ id: 'dis-key' });
    expect(await check(a)).toBe(200);
    const keyA = (await h.store.list()).find((l) => l.key.integratorId === 'dis-key')!.key.keyId;
    await h.store.setKeyDisabled(keyA, true);
    expect(await waitFor401(a)).toBeLessThan(1_000);

    const b = await h.apiKey({ id: 'dis-int' });
    expect(await check(b)).toBe(200);
    await h.store.updateIntegrator('dis-int', { disabled: true });
    expect(await waitFor401(b)).toBeLessThan(1_000);

    const c = await h.apiKey({ id: 'revoked' });
    expect(await check(c)).toBe(200);
    await h.store.revokeKey((await h.store.list()).find((l) => l.key.integratorId === 'revoked')!.key.keyId);
    expect(await waitFor401(c)).toBeLessThan(1_000);
  });
});

describe('routing errors, in precedence order', () => {
  it('error: an unknown route is 404 NOT_FOUND, before the key check', async () => {
    for (const path of ['/v2/prices', '/v3/price', '/', '/v2/price/', '/V2/PRICE', '/v1/nothing']) {
      const res = await call(request(gw.app).get(path));
      expect(res.status).toBe(404);
      envelope(res, 'NOT_FOUND', `no route for GET ${path}`);
    }
  });

  it.each([
    ['post', '/v2/price', 'GET, HEAD'],
    ['delete', '/v2/price', 'GET, HEAD'],
    ['get', '/v2/swap/sign', 'POST'],
    ['put', '/v2/swap/sign', 'POST'],
    ['post', '/v2/openapi.json', 'GET, HEAD'],
    ['post', '/v1/price', 'GET, HEAD'],
    ['get', '/v1/swap/sign', 'POST'],
  ] as const)(
    'error: %s %s is 405 METHOD_NOT_ALLOWED with Allow, before the key check',
    async (method, path, allow) => {
      const res = await call(request(gw.app)[method](path));
      expect(res.status).toBe(405);
      expect(res.headers.allow).toBe(allow);
      envelope(res, 'METHOD_NOT_ALLOWED', `${method.toUpperCase()} is not allowed here`);
    },
  );

  it('error: OPTIONS without CORS configured is 405', async () => {
    const res = await call(request(gw.app).options('/v2/price'));
    expect(res.status).toBe(405);
  });
});

describe('headers of every response', () => {
  it('behavior: X-Request-Id on success and on every error; a safe incoming id is kept', async () => {
    const key = await h.apiKey();
    const responses = [
      await call(request(gw.app).get('/v2/price').set('X-API-KEY', key)),
      await call(request(gw.app).get('/nope')),
      await call(request(gw.app).post('/v2/price')),
      await call(request(gw.app).get('/v2/price')),
      await call(request(gw.app).get('/v2/price?chainId=x').set('X-API-KEY', key)),
    ];
    for (const res of responses) expect(res.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    const mine = await call(request(gw.app).get('/v2/price').set('X-Request-Id', 'my-trace.01:abc'));
    expect(mine.headers['x-request-id']).toBe('my-trace.01:abc');
    expect(mine.body.error.requestId).toBe('my-trace.01:abc');
    const unsafe = await call(request(gw.app).get('/v2/price').set('X-Request-Id', 'no spaces allowed'));
    expect(unsafe.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('behavior: security headers (helmet, API profile) and no X-Powered-By or ETag', async () => {
    const key = await h.apiKey();
    for (const res of [
      await call(request(gw.app).get('/v2/price').set('X-API-KEY', key)),
      await call(request(gw.app).get('/nope')),
    ]) {
      expect(res.headers).toMatchObject({
        'content-security-policy': "default-src 'none';frame-ancestors 'none'",
        'x-content-type-options': 'nosniff',
        'x-frame-options': 'DENY',
        'referrer-policy': 'no-referrer',
        'strict-transport-security': 'max-age=31536000; includeSubDomains',
        'cross-origin-opener-policy': 'same-origin',
        'cross-origin-resource-policy': 'same-origin',
      });
      expect(res.headers['x-powered-by']).toBeUndefined();
      expect(res.headers.etag).toBeUndefined();
    }
  });

  it('behavior: CORS when configured: allowed origin, exposed headers, preflight on API routes only', async () => {
    const corsGw = await h.gateway({ corsOrigins: ['https://app.example'] });
    const key = await h.apiKey();
    const res = await call(
      request(corsGw.app).get('/v2/price').set('X-API-KEY', key).set('Origin', 'https://app.example'),
    );
    expect(res.headers['access-control-allow-origin']).toBe('https://app.example');
    expect(res.headers['access-control-expose-headers']).toBe(
      'X-Request-Id,RateLimit-Limit,RateLimit-Remaining,RateLimit-Reset,Retry-After,Deprecation,Link',
    );
    const other = await call(
      request(corsGw.app).get('/v2/price').set('X-API-KEY', key).set('Origin', 'https://evil.example'),
    );
    expect(other.headers['access-control-allow-origin']).toBeUndefined();
    const preflight = await request(corsGw.app)
      .options('/v2/swap/sign')
      .set('Origin', 'https://app.example')
      .set('Access-Control-Request-Method', 'POST')
      .set('Access-Control-Request-Headers', 'content-type,x-api-key');
    expect(preflight.status).toBe(204);
    expect(preflight.headers['access-control-allow-headers']).toBe('Content-Type,X-API-KEY,X-Request-Id,Last-Event-ID');
    expect(preflight.headers['x-request-id']).toBeDefined();
    // A browser's EventSource reconnects with Last-Event-ID: its preflight must pass.
    const streamPreflight = await request(corsGw.app)
      .options('/v2/price/stream')
      .set('Origin', 'https://app.example')
      .set('Access-Control-Request-Method', 'GET')
      .set('Access-Control-Request-Headers', 'last-event-id,x-api-key');
    expect(streamPreflight.status).toBe(204);
    expect(streamPreflight.headers['access-control-allow-headers']).toContain('Last-Event-ID');
    const unknown = await call(request(corsGw.app).options('/v2/nothing').set('Origin', 'https://app.example'));
    expect(unknown.status).toBe(404);
  });

  it('behavior: /healthz on the public port needs no key', async () => {
    const res = await request(gw.app).get('/healthz');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'ok' });
  });
});
