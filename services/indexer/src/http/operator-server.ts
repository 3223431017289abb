/**
 * The indexer's operator endpoints (it serves no public API): `/healthz` (alive), `/readyz`
 * (every readiness check resolves within 1 s: Redis, node connection, pair registry) and
 * `/metrics` (Prometheus text). Same contract as core's `healthRoutes`, served by bare
 * `node:http` because the indexer does not depend on Express (its only HTTP surface is
 * these three GETs). Returns core's `Served` so `shutdownOnSignals` can drain it.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { listen, type Logger, type Metrics, type ReadinessCheck, type Served } from '@pmm/core';

const CHECK_TIMEOUT_MS = 1_000;

function withTimeout(check: ReadinessCheck): Promise<string> {
  return new Promise((resolve) => {
    const t = setTimeout(() => resolve('fail: timeout'), CHECK_TIMEOUT_MS);
    check().then(
      () => {
        clearTimeout(t);
        resolve('ok');
      },
      (err: unknown) => {
        clearTimeout(t);
        resolve(`fail: ${err instanceof Error ? err.message : 'error'}`);
      },
    );
  });
}

function send(
  res: ServerResponse,
  status: number,
  body: string,
  contentType = 'application/json; charset=utf-8',
): void {
  res.writeHead(status, { 'content-type': contentType, 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

async function handle(req: IncomingMessage, res: ServerResponse, deps: OperatorDeps): Promise<void> {
  const path = (req.url ?? '/').split('?')[0];
  const known = path === '/healthz' || path === '/readyz' || path === '/metrics';
  if (!known)
    return send(
      res,
      404,
      JSON.stringify({ error: { code: 'NOT_FOUND', message: `no route for ${req.method} ${path}` } }),
    );
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    res.setHeader('allow', 'GET, HEAD');
    return send(
      res,
      405,
      JSON.stringify({ error: { code: 'METHOD_NOT_ALLOWED', message: `${req.method} is not allowed here` } }),
    );
  }
  if (path === '/healthz') return send(res, 200, JSON.stringify({ status: 'ok' }));
  if (path === '/metrics')
    return send(res, 200, await deps.metrics.registry.metrics(), deps.metrics.registry.contentType);
  const names = Object.keys(deps.checks);
  const results = await Promise.all(names.map((n) => withTimeout(deps.checks[n]!)));
  const checks = Object.fromEntries(names.map((n, i) => [n, results[i]]));
  const ok = results.every((r) => r === 'ok');
  return send(res, ok ? 200 : 503, JSON.stringify({ status: ok ? 'ok' : 'unavailable', checks }));
}

export interface OperatorDeps {
  logger: Logger;
  metrics: Metrics;
  checks: Record<string, ReadinessCheck>;
}

/** Listens on `port` (0: any free port) and resolves once bound. */
export function serveOperatorEndpoints(deps: OperatorDeps, port: number, host: string): Promise<Served> {
  const handler = (req: IncomingMessage, res: ServerResponse): void => {
    handle(req, res, deps).catch((err: unknown) => {
      deps.logger.error('operator endpoint failed', { error: err });
      if (!res.headersSent)
        send(res, 500, JSON.stringify({ error: { code: 'INTERNAL_ERROR', message: 'internal error' } }));
    });
  };
  return listen(handler, port, host, (err) => deps.logger.error('operator server error', { error: err }));
}
