/**
 * The indexer's operator endpoints (it serves no public API): `/healthz` (alive), `/readyz`
 * (every readiness check resolves within 1 s: Redis, node connection, pair registry) and
 * `/metrics` (Prometheus text), behind core's operatorGuard (Host names, optional OPS_TOKEN):
 * core's health routes in core's route table, the shell every
 * port of every service is served by. Returns core's `Served` so `shutdownOnSignals` can drain it.
 */
import {
  healthRoutes,
  listen,
  operatorGuard,
  requestFrame,
  routeTable,
  type Logger,
  type Metrics,
  type OperatorGuardOptions,
  type ReadinessCheck,
  type RedisClient,
  type Served,
} from '@pmm/core';

export interface OperatorDeps {
  logger: Logger;
  metrics: Metrics;
  checks: Record<string, ReadinessCheck>;
  /** Who may read these endpoints; default: IP addresses and localhost, no token. */
  access?: OperatorGuardOptions;
}

/** The readiness checks of a process that follows a chain (indexer, ledger): Redis answers, the node connection is up. */
export function chainFollowerChecks(redis: RedisClient, nodeUp: () => boolean): Record<string, ReadinessCheck> {
  return {
    redis: async () => {
      await redis.ping();
    },
    node: async () => {
      if (!nodeUp()) throw new Error('node connection down');
    },
  };
}

/** Listens on `port` (0: any free port) and resolves once bound. */
export function serveOperatorEndpoints(deps: OperatorDeps, port: number, host: string): Promise<Served> {
  const handler = routeTable({
    frame: requestFrame({ logger: deps.logger }),
    routes: healthRoutes({
      checks: deps.checks,
      registry: deps.metrics.registry,
      guard: operatorGuard(deps.access ?? { allowedHosts: [] }),
    }),
  });
  return listen(handler, port, host, (err) => deps.logger.error('operator server error', { error: err }));
}
