import express from 'express';
import request from 'supertest';
import { ApiError } from '@pmm/protocol';
import {
  createLogger,
  createMetrics,
  errorHandler,
  healthRoutes,
  httpMetrics,
  methodNotAllowed,
  notFound,
  requestContext,
} from '@pmm/core';

function app(checks: Record<string, () => Promise<void>> = {}) {
  const metrics = createMetrics('test', { defaultMetrics: false });
  const a = express();
  a.use(requestContext(createLogger({ service: 'test', silent: true })));
  a.use(httpMetrics(metrics));
  a.use(healthRoutes({ checks, registry: metrics.registry }));
  a.post('/echo', express.json({ limit: '100b' }), (req, res) => {
    res.json(req.body);
  });
  a.all('/echo', methodNotAllowed(['POST']));
  a.get('/boom', () => {
    throw new Error('database password is hunter2');
  });
  a.get('/teapot', () => {
    throw new ApiError('RATE_LIMITED', 'slow down', { 'Retry-After': '3' });
  });
  a.use(notFound());
  a.use(errorHandler());
  return a;
}

describe('http shell', () => {
  it('behavior: every response carries X-Request-Id; a safe incoming id is kept', async () => {
    const res = await request(app()).get('/healthz').set('X-Request-Id', 'abc-123');
    expect(res.headers['x-request-id']).toBe('abc-123');
    const gen = await request(app()).get('/healthz').set('X-Request-Id', 'bad id with spaces');
    expect(gen.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('error: unknown route is 404 NOT_FOUND in the envelope', async () => {
    const res = await request(app()).get('/nope');
    expect(res.status).toBe(404);
    expect(res.body).toEqual({
      error: { code: 'NOT_FOUND', message: 'no route for GET /nope', requestId: res.headers['x-request-id'] },
    });
  });

  it('error: wrong method is 405 with Allow', async () => {
    const res = await request(app()).get('/echo');
    expect(res.status).toBe(405);
    expect(res.headers.allow).toBe('POST');
    expect(res.body.error.code).toBe('METHOD_NOT_ALLOWED');
  });

  it('error: malformed JSON is 400 INVALID_JSON, oversize is 413 PAYLOAD_TOO_LARGE', async () => {
    const bad = await request(app()).post('/echo').set('Content-Type', 'application/json').send('{"a":');
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatchObject({ code: 'INVALID_JSON', message: 'body: malformed JSON' });
    const big = await request(app())
      .post('/echo')
      .set('Content-Type', 'application/json')
      .send(JSON.stringify({ a: 'x'.repeat(200) }));
    expect(big.status).toBe(413);
    expect(big.body.error.code).toBe('PAYLOAD_TOO_LARGE');
  });

  it('error: an unexpected exception is 500 INTERNAL_ERROR without its text', async () => {
    const res = await request(app()).get('/boom');
    expect(res.status).toBe(500);
    expect(res.body.error).toMatchObject({ code: 'INTERNAL_ERROR', message: 'internal error' });
    expect(JSON.stringify(res.body)).not.toContain('hunter2');
  });

  it('behavior: ApiError headers are sent', async () => {
    const res = await request(app()).get('/teapot');
    expect(res.status).toBe(429);
    expect(res.headers['retry-after']).toBe('3');
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
