/**
 * The route table (core route-table.ts) with the request frame and the health routes: what every
 * port of every service answers by itself (404, 405 with Allow, preflights, the envelope,
 * HEAD, metrics by route pattern).
 */
import request from 'supertest';
import { ApiError } from '@pmm/protocol';
import {
  createLogger,
  createMetrics,
  healthRoutes,
  readLimitedBody,
  requestFrame,
  routeTable,
  sendJson,
  type Step,
} from '@pmm/core';

/** A CORS step as the `cors` package behaves: answers a preflight 204, passes anything else on. */
const preflight: Step = (req, res, next) => {
  res.setHeader('Access-Control-Allow-Origin', 'https://app.example');
  if (req.method !== 'OPTIONS' || !req.headers['access-control-request-method']) return next();
  res.statusCode = 204;
  res.end();
};

function app(checks: Record<string, () => Promise<void>> = {}, withCors = false) {
  const metrics = createMetrics('test', { defaultMetrics: false });
  const echo: Step = (req, res) => readLimitedBody(req, res, 100, (body) => sendJson(res, 200, body));
  return routeTable({
    frame: requestFrame({ logger: createLogger({ service: 'test', silent: true }), metrics }),
    cors: withCors ? preflight : undefined,
    routes: [
      ...healthRoutes({ checks, registry: metrics.registry }),
      { path: '/echo', methods: ['POST'], steps: [echo], cors: true },
      {
        path: '/boom',
        methods: ['GET', 'HEAD'],
        steps: [
          () => {
            throw new Error('database password is hunter2');
          },
        ],
      },
      {
        path: '/teapot',
        methods: ['GET', 'HEAD'],
        steps: [(_req, _res, next) => next(new ApiError('RATE_LIMITED', 'slow down', { 'Retry-After': '3' }))],
      },
      {
        path: '/async',
        methods: ['GET', 'HEAD'],
        steps: [
          (_req, _res, next) => void Promise.reject(new ApiError('SERVICE_UNAVAILABLE', 'later')).catch(next),
          (_req, res) => sendJson(res, 200, { unreachable: true }),
        ],
      },
    ],
  });
}

describe('route table', () => {
  it('behavior: every response carries X-Request-Id; a safe incoming id is kept', async () => {
    const res = await request(app()).get('/healthz').set('X-Request-Id', 'abc-123');
    expect(res.headers['x-request-id']).toBe('abc-123');
    const gen = await request(app()).get('/healthz').set('X-Request-Id', 'bad id with spaces');
    expect(gen.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('error: unknown route is 404 NOT_FOUND in the envelope', async () => {
    const res = await request(app()).get('/nope?x=1');
    expect(res.status).toBe(404);
    expect(res.body).toEqual({
      error: { code: 'NOT_FOUND', message: 'no route for GET /nope', requestId: res.headers['x-request-id'] },
    });
  });

  it('error: routes are case- and slash-sensitive', async () => {
    expect((await request(app()).get('/Healthz')).status).toBe(404);
    expect((await request(app()).get('/healthz/')).status).toBe(404);
  });

  it('error: wrong method is 405 with Allow, in the envelope', async () => {
    const res = await request(app()).get('/echo');
    expect(res.status).toBe(405);
    expect(res.headers.allow).toBe('POST');
    expect(res.body.error).toEqual({
      code: 'METHOD_NOT_ALLOWED',
      message: 'GET is not allowed here',
      requestId: res.headers['x-request-id'],
    });
    const del = await request(app()).delete('/healthz');
    expect(del.status).toBe(405);
    expect(del.headers.allow).toBe('GET, HEAD');
  });

  it('behavior: HEAD is answered by the GET steps, without a body', async () => {
    const res = await request(app()).head('/healthz');
    expect(res.status).toBe(200);
    expect(res.headers['content-length']).toBe(String(JSON.stringify({ status: 'ok' }).length));
    expect(res.text).toBeUndefined();
  });

  it('behavior: a body step reads with its limit; over it is 413 in the envelope', async () => {
    const ok = await request(app()).post('/echo').send('{"a":1}');
    expect(ok.status).toBe(200);
    const big = await request(app())
      .post('/echo')
      .send(JSON.stringify({ a: 'x'.repeat(200) }));
    expect(big.status).toBe(413);
    expect(big.body.error.code).toBe('PAYLOAD_TOO_LARGE');
  });

  it('error: an exception in a step is 500 INTERNAL_ERROR without its text', async () => {
    const res = await request(app()).get('/boom');
    expect(res.status).toBe(500);
    expect(res.body.error).toMatchObject({ code: 'INTERNAL_ERROR', message: 'internal error' });
    expect(JSON.stringify(res.body)).not.toContain('hunter2');
  });

  it('behavior: ApiError headers are sent; an error passed on later skips the remaining steps', async () => {
    const res = await request(app()).get('/teapot');
    expect(res.status).toBe(429);
    expect(res.headers['retry-after']).toBe('3');
    const later = await request(app()).get('/async');
    expect(later.status).toBe(503);
    expect(later.body.error.message).toBe('later');
  });

  it('behavior: CORS preflights are answered on CORS routes only when configured; OPTIONS is 405 otherwise', async () => {
    const ask = (a: ReturnType<typeof app>, path: string) =>
      request(a).options(path).set('Origin', 'https://app.example').set('Access-Control-Request-Method', 'POST');
    const on = await ask(app({}, true), '/echo');
    expect(on.status).toBe(204);
    expect(on.headers['access-control-allow-origin']).toBe('https://app.example');
    expect((await ask(app({}, true), '/healthz')).status).toBe(405);
    const off = await ask(app(), '/echo');
    expect(off.status).toBe(405);
    expect(off.body.error.code).toBe('METHOD_NOT_ALLOWED');
  });

  it('behavior: /readyz is 503 when a check fails or hangs, 200 when all pass', async () => {
    const ok = await request(app({ redis: async () => undefined })).get('/readyz');
    expect(ok.status).toBe(200);
    const bad = await request(app({ redis: () => new Promise(() => undefined), keys: async () => undefined })).get(
      '/readyz',
    );
    expect(bad.status).toBe(503);
    expect(bad.body.checks).toEqual({ redis: 'fail: timeout', keys: 'ok' });
  });

  it('behavior: /metrics counts requests by route pattern, not raw URL', async () => {
    const a = app();
    await request(a).get('/nope/123');
    await request(a).get('/healthz');
    const text = (await request(a).get('/metrics')).text;
    expect(text).toMatch(/http_requests_total\{method="GET",route="\/healthz",code="200",service="test"\} 1/);
    expect(text).toMatch(/route="unmatched",code="404"/);
    expect(text).not.toContain('/nope/123');
  });
});
