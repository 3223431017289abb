/**
 * The indexer's operator endpoints (it serves no public API): `/healthz` (alive), `/readyz`
 * (every readiness check resolves within 1 s: Redis, node connection, pair registry) and
 * `/metrics` (Prometheus text). Same readiness rule as core's `healthRoutes` (checkReadiness), served by bare
 * `node:http` because the indexer does not depend on Express (its only HTTP surface is
 * these three GETs). Returns core's `Served` so `shutdownOnSignals` can drain it.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ApiError, toErrorEnvelope } from '@pmm/protocol';
import {
  checkReadiness,
  listen,
  requestIdOf,
  type Logger,
  type Metrics,
  type ReadinessCheck,
  type Served,
} from '@pmm/core';

function send(
  res: ServerResponse,
  status: number,
  body: string,
  contentType = 'application/json; charset=utf-8',
): void {
  res.writeHead(status, { 'content-type': contentType, 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

/** The error envelope every service answers with (a request id included). */
function sendError(req: IncomingMessage, res: ServerResponse, err: ApiError): void {
  const { status, body } = toErrorEnvelope(err, requestIdOf(req));
  send(res, status, JSON.stringify(body));
}

async function handle(req: IncomingMessage, res: ServerResponse, deps: OperatorDeps): Promise<void> {
  const path = (req.url ?? '/').split('?')[0];
  const known = path === '/healthz' || path === '/readyz' || path === '/metrics';
  if (!known) return sendError(req, res, new ApiError('NOT_FOUND', `no route for ${req.method} ${path}`));
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    res.setHeader('allow', 'GET, HEAD');
    return sendError(req, res, new ApiError('METHOD_NOT_ALLOWED', `${req.method} is not allowed here`));
  }
  if (path === '/healthz') return send(res, 200, JSON.stringify({ status: 'ok' }));
  if (path === '/metrics')
    return send(res, 200, await deps.metrics.registry.metrics(), deps.metrics.registry.contentType);
  const report = await checkReadiness(deps.checks);
  return send(res, report.status === 'ok' ? 200 : 503, JSON.stringify(report));
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
      if (!res.headersSent) sendError(req, res, new ApiError('INTERNAL_ERROR', 'internal error'));
    });
  };
  return listen(handler, port, host, (err) => deps.logger.error('operator server error', { error: err }));
}
