import { get as httpGet } from 'node:http';
import request from 'supertest';
import type { Gateway } from '@pmm/gateway';
import { bookBody, harness, type Harness } from '../support/harness';
import { fakeSigner, type FakeSigner } from '../support/fake-signer';

let h: Harness;
let signer: FakeSigner;
let gw: Gateway;

beforeAll(async () => {
  h = await harness();
  signer = await fakeSigner();
  gw = await h.gateway({ signerUrl: signer.url });
});
afterAll(async () => {
  await h.cleanup();
  await signer.close();
});

describe('operator port', () => {
  it('behavior: /healthz is 200; /readyz checks Redis and the signer', async () => {
    expect((await request(gw.opsApp).get('/healthz')).body).toEqual({ status: 'ok' });
    const ready = await request(gw.opsApp).get('/readyz');
    expect(ready.status).toBe(200);
    expect(ready.body).toEqual({ status: 'ok', checks: { redis: 'ok', signer: 'ok', halts: 'ok' } });
  });

  it('error: /readyz is 503 when the signer is unreachable', async () => {
    const down = await fakeSigner();
    await down.close();
    const gw2 = await h.gateway({ signerUrl: down.url });
    const ready = await request(gw2.opsApp).get('/readyz');
    expect(ready.status).toBe(503);
    expect(ready.body.checks.redis).toBe('ok');
    expect(ready.body.checks.signer).toMatch(/^fail: /);
  });

  it('error: /readyz is 503 when the signer is up but refuses the internal token (another INTERNAL_TOKEN)', async () => {
    const refusing = await fakeSigner();
    refusing.refuseToken();
    try {
      const gw3 = await h.gateway({ signerUrl: refusing.url });
      const ready = await request(gw3.opsApp).get('/readyz');
      expect(ready.status).toBe(503);
      expect(ready.body.checks.signer).toMatch(/^fail: the signer refused the internal token \(HTTP 401\)/);
    } finally {
      await refusing.close();
    }
  });

  it('behavior: /metrics counts requests by route pattern and code, has latency histograms and book age per chain', async () => {
    const key = await h.apiKey();
    await h.putBook(
      8453,
      JSON.stringify({ chainId: 8453, blockNumber: 5, blockTime: Math.floor(Date.now() / 1000) - 30, pairs: [] }),
    );
    await h.dropBook(56);
    await request(gw.app).get('/v2/price').set('X-API-KEY', key);
    await request(gw.app).get('/v2/price?chainId=abc').set('X-API-KEY', key);
    await request(gw.app).get('/v2/price?chainId=0123456789');
    await request(gw.app).get('/nowhere/12345');
    const res = await request(gw.opsApp).get('/metrics');
    expect(res.status).toBe(200);
    const text = res.text;
    expect(text).toMatch(/http_requests_total\{method="GET",route="\/v2\/price",code="200",service="gateway"\} 1/);
    expect(text).toMatch(/http_requests_total\{method="GET",route="\/v2\/price",code="422",service="gateway"\} 1/);
    expect(text).toMatch(/http_requests_total\{method="GET",route="\/v2\/price",code="401",service="gateway"\} 1/);
    expect(text).toMatch(/http_requests_total\{method="GET",route="unmatched",code="404",service="gateway"\} 1/);
    // What the client sent is in no label: not its path, not its query. Only the labels are
    // searched, as the values are numbers that can hold any digits (a gauge read 0.012345343 once).
    expect(text).not.toContain('nowhere');
    const labelSets = text.match(/\{[^}]*\}/g) ?? [];
    expect(labelSets.length).toBeGreaterThan(0);
    expect(labelSets.filter((labels) => labels.includes('12345'))).toEqual([]);
    expect(text).toMatch(
      /http_request_duration_seconds_bucket\{le="0.005",service="gateway",method="GET",route="\/v2\/price"\}/,
    );
    const age = /gateway_book_age_seconds\{chain="8453",service="gateway"\} ([0-9.]+)/.exec(text);
    expect(Number(age?.[1])).toBeGreaterThanOrEqual(30);
    expect(Number(age?.[1])).toBeLessThan(60);
    expect(text).toMatch(/gateway_book_available\{chain="8453",service="gateway"\} 1/);
    expect(text).toMatch(/gateway_book_available\{chain="56",service="gateway"\} 0/);
    expect(text).not.toMatch(/gateway_book_age_seconds\{chain="56"/);
    void bookBody;
  });

  it('behavior: the operator routes are not on the public app', async () => {
    expect((await request(gw.app).get('/metrics')).status).toBe(404);
    expect((await request(gw.app).get('/readyz')).status).toBe(404);
  });
});

describe('operator port: who may read it', () => {
  it('security: a Host that is not an IP, localhost or OPS_ALLOWED_HOSTS is 400 (no reading by DNS rebinding)', async () => {
    const gw2 = await h.gateway({ signerUrl: signer.url, opsAllowedHosts: ['gateway'] });
    for (const host of ['attacker.example', 'attacker.example:9080', 'localhost.attacker.example', 'gateway.evil']) {
      const res = await request(gw2.opsApp).get('/metrics').set('Host', host);
      expect(res.status).toBe(400);
      expect(res.body.error).toMatchObject({ code: 'MALFORMED_REQUEST' });
      expect(res.text).not.toContain('http_requests_total');
    }
    const console = await request(gw2.opsApp).get('/console').set('Host', 'attacker.example');
    expect(console.status).toBe(400);
    for (const host of [
      '127.0.0.1:9080',
      'localhost:9080',
      'LOCALHOST',
      '[::1]:9080',
      '10.0.0.7',
      'gateway:9080',
      'Gateway',
    ])
      expect({ host, status: (await request(gw2.opsApp).get('/healthz').set('Host', host)).status }).toEqual({
        host,
        status: 200,
      });
  });

  it('security: with OPS_TOKEN, /metrics and the console need the bearer token; /healthz and /readyz stay open', async () => {
    const token = 'ops-token-0123456789abcdef';
    const gw2 = await h.gateway({ signerUrl: signer.url, opsToken: token });
    for (const path of ['/metrics', '/console', '/console/events']) {
      const none = await request(gw2.opsApp).get(path);
      expect(none.status).toBe(401);
      expect(none.headers['www-authenticate']).toBe('Bearer');
      expect(JSON.stringify(none.body)).not.toContain(token);
      expect((await request(gw2.opsApp).get(path).set('Authorization', 'Bearer wrong-token-000000000')).status).toBe(
        401,
      );
    }
    expect((await request(gw2.opsApp).get('/metrics').set('Authorization', `Bearer ${token}`)).status).toBe(200);
    expect((await request(gw2.opsApp).get('/healthz')).status).toBe(200);
    expect((await request(gw2.opsApp).get('/readyz')).status).toBe(200);
  });

  it('error: past CONSOLE_MAX_VIEWERS a new console stream is 429 with Retry-After', async () => {
    const gw2 = await h.gateway({ signerUrl: signer.url, consoleMaxViewers: 1 });
    const base = new URL(await h.listen(gw2.opsApp));
    const open = () =>
      new Promise<{ status: number; res: import('node:http').IncomingMessage }>((resolve, reject) =>
        httpGet({ host: base.hostname, port: base.port, path: '/console/events', agent: false }, (res) =>
          resolve({ status: res.statusCode ?? 0, res }),
        ).on('error', reject),
      );
    const first = await open();
    expect(first.status).toBe(200);
    const second = await open();
    expect(second.status).toBe(429);
    expect(second.res.headers['retry-after']).toBe('10');
    second.res.resume();
    first.res.destroy();
    await new Promise((r) => setTimeout(r, 100));
    const third = await open();
    expect(third.status).toBe(200);
    third.res.destroy();
  });
});
