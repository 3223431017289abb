/**
 * The indexer's operator endpoints (bare node:http): the same readiness rule as the other
 * services (core's checkReadiness), the error envelope with a request id, and the Host and
 * operator-token check (a web page reaching the port by DNS rebinding reads nothing).
 */
import { get } from 'node:http';
import { createLogger, createMetrics, type Served } from '@pmm/core';
import { serveOperatorEndpoints, type OperatorDeps } from '../../src/http/operator-server';

let served: Served;
let base: string;
let redisUp = true;
const OPS_TOKEN = 'indexer-ops-token-0123456789';

const deps = (access?: OperatorDeps['access']): OperatorDeps => ({
  logger: createLogger({ service: 'indexer', silent: true }),
  metrics: createMetrics('indexer', { defaultMetrics: false }),
  checks: { redis: () => (redisUp ? Promise.resolve() : Promise.reject(new Error('connection refused'))) },
  access,
});

/** GET with a chosen Host header (fetch does not let a caller set it). */
function getWithHost(
  port: number,
  path: string,
  host: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    get({ host: '127.0.0.1', port, path, headers: { host, ...headers } }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    }).on('error', reject);
  });
}

beforeAll(async () => {
  served = await serveOperatorEndpoints(deps(), 0, '127.0.0.1');
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

  it('security: a host name that is not an IP, localhost or OPS_ALLOWED_HOSTS is refused on every route', async () => {
    for (const path of ['/metrics', '/healthz', '/readyz']) {
      const res = await getWithHost(served.port, path, 'rebound.attacker.example:8090');
      expect(res.status).toBe(400);
      expect(JSON.parse(res.body).error.code).toBe('MALFORMED_REQUEST');
      expect(res.body).not.toContain('indexer_');
    }
    expect((await getWithHost(served.port, '/metrics', `localhost:${served.port}`)).status).toBe(200);
    expect((await getWithHost(served.port, '/metrics', `[::1]:${served.port}`)).status).toBe(200);
    const named = await serveOperatorEndpoints(deps({ allowedHosts: ['indexer-8453'] }), 0, '127.0.0.1');
    try {
      expect((await getWithHost(named.port, '/metrics', 'indexer-8453:8090')).status).toBe(200);
      expect((await getWithHost(named.port, '/metrics', 'indexer-56:8090')).status).toBe(400);
    } finally {
      await named.close();
    }
  });

  it('security: with OPS_TOKEN, /metrics needs the bearer token; the probes stay open', async () => {
    redisUp = true;
    const guarded = await serveOperatorEndpoints(deps({ allowedHosts: [], token: OPS_TOKEN }), 0, '127.0.0.1');
    try {
      const host = `127.0.0.1:${guarded.port}`;
      const refused = await getWithHost(guarded.port, '/metrics', host);
      expect(refused.status).toBe(401);
      expect(JSON.parse(refused.body).error.code).toBe('UNAUTHORIZED');
      expect((await getWithHost(guarded.port, '/metrics', host, { authorization: 'Bearer wrong' })).status).toBe(401);
      const metrics = await getWithHost(guarded.port, '/metrics', host, { authorization: `Bearer ${OPS_TOKEN}` });
      expect(metrics.status).toBe(200);
      expect((await getWithHost(guarded.port, '/healthz', host)).status).toBe(200);
      expect((await getWithHost(guarded.port, '/readyz', host)).status).toBe(200);
    } finally {
      await guarded.close();
    }
  });
});
