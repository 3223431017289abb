/**
 * The indexer's operator endpoints (bare node:http): the same readiness rule as the other
 * services (core's checkReadiness) and the error envelope with a request id.
 */
import { createLogger, createMetrics, type Served } from '@pmm/core';
import { serveOperatorEndpoints } from '../src/http/operator-server';

let served: Served;
let base: string;
let redisUp = true;

beforeAll(async () => {
  served = await serveOperatorEndpoints(
    {
      logger: createLogger({ service: 'indexer', silent: true }),
      metrics: createMetrics('indexer', { defaultMetrics: false }),
      checks: { redis: () => (redisUp ? Promise.resolve() : Promise.reject(new Error('connection refused'))) },
    },
    0,
    '127.0.0.1',
  );
  base = `http://127.0.0.1:${served.port}`;
});

afterAll(() => served.close());

describe('indexer operator endpoints', () => {
  it('behavior: /readyz names each check and is 503 while one fails', async () => {
    redisUp = true;
    let res = await fetch(`${base}/readyz`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: 'ok', checks: { redis: 'ok' } });
    redisUp = false;
    res = await fetch(`${base}/readyz`);
    expect(res.status).toBe(503);
    expect(await res.json()).toEqual({ status: 'unavailable', checks: { redis: 'fail: connection refused' } });
  });

  it('error: 404 and 405 use the error envelope, with the caller request id', async () => {
    let res = await fetch(`${base}/nope`, { headers: { 'X-Request-Id': 'ops-1' } });
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({
      error: { code: 'NOT_FOUND', message: 'no route for GET /nope', requestId: 'ops-1' },
    });
    res = await fetch(`${base}/healthz`, { method: 'POST' });
    expect(res.status).toBe(405);
    const body = (await res.json()) as { error: { code: string; requestId: string } };
    expect(body.error.code).toBe('METHOD_NOT_ALLOWED');
    expect(body.error.requestId).toMatch(/^[0-9a-f-]{36}$/);
  });
});
