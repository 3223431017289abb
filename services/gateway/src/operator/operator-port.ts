/**
 * The gateway's operator port, one route table: `/healthz`, `/readyz` (Redis and the signer),
 * `/metrics` (the book gauges refreshed at each scrape), and the operator console (`/console`,
 * console/). Every answer carries the security headers; core's operatorGuard checks the Host header
 * and, when configured, the operator token first.
 */
import type { RequestListener } from 'node:http';
import {
  healthRoutes,
  operatorGuard,
  redisKeys,
  requestFrame,
  roleServers,
  routeTable,
  type HaltView,
  type Logger,
  type Metrics,
  type ReadinessCheck,
  type RedisClient,
} from '@pmm/core';
import type { BookCache } from '../price/book-cache';
import type { StreamHub } from '../stream/stream-hub';
import type { gatewayMetrics } from '../gateway-metrics';
import { securityHeaders } from '../http/security-headers';
import { ConsoleFeed } from '../console/console-feed';
import { consoleRoutes } from '../console/console-routes';
import { consoleStatus } from '../console/console-status';
import { signerReadiness } from './signer-readiness';

export interface OperatorPortOptions {
  logger: Logger;
  metrics: Metrics;
  gauges: ReturnType<typeof gatewayMetrics>;
  /** REDIS_URL (books, registries, presence). */
  redis: RedisClient;
  /** The records' server: the same connection when one server holds both roles. */
  records: RedisClient;
  redisKeyPrefix: string;
  books: BookCache;
  hub: StreamHub;
  /** The operator's halts (readiness, metrics and the console: shown, read only). */
  halts: HaltView;
  chains: readonly number[];
  signerUrl: string;
  internalToken: string;
  allowedHosts: readonly string[];
  token?: string;
  consoleMaxViewers: number;
}

export interface OperatorPort {
  listener: RequestListener;
  /** The console's live streams (ended on shutdown). */
  console: ConsoleFeed;
}

export function operatorPort(opts: OperatorPortOptions): OperatorPort {
  const { redis, records } = opts;
  const readiness: Record<string, ReadinessCheck> = {
    redis: async () => {
      await Promise.all(roleServers(redis, records).map(({ client }) => client.ping()));
    },
    signer: signerReadiness(opts.signerUrl, opts.internalToken),
    // Not ready while the halts cannot be read: no book would be offered (fail closed).
    halts: async () => {
      opts.halts.current();
    },
  };
  const bookGauges = opts.gauges.refreshBookGauges(opts.books, opts.chains);
  const feed = new ConsoleFeed({
    hub: opts.hub,
    chains: opts.chains,
    status: consoleStatus({
      redis,
      records,
      keys: redisKeys(opts.redisKeyPrefix),
      chains: opts.chains,
      readiness,
      halts: opts.halts,
    }),
  });
  const listener = routeTable({
    frame: requestFrame({ logger: opts.logger, headers: securityHeaders() }),
    mounts: [['/', operatorGuard({ allowedHosts: opts.allowedHosts, token: opts.token })]],
    routes: [
      ...healthRoutes({
        checks: readiness,
        registry: opts.metrics.registry,
        beforeMetrics: (req, res, next) => {
          opts.gauges.refreshHaltGauges(opts.halts);
          bookGauges(req, res, next);
        },
      }),
      ...consoleRoutes(feed, opts.consoleMaxViewers),
    ],
  });
  return { listener, console: feed };
}
