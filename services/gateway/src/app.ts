/**
 * `createApp(deps)`: the gateway from explicit dependencies, as two route tables (core
 * route-table.ts), one per port:
 * - `app`, the public port: the API's routes (http/public-routes.ts; each takes CORS, the API
 *   key and the rate limit, then its feature's step: price/, stream/, sign/, fills/, docs/) and the
 *   keyless `/healthz` and `/docs` pages;
 * - `opsApp`, the operator port (operator/operator-port.ts): health, readiness, metrics and
 *   the operator console.
 *
 * Order of answers (docs/decisions/0001-error-precedence.md): unknown route 404 → wrong method 405
 * (both from the table) → API key 401 → rate limit 429 → the route's own steps (body size
 * 413, validation...).
 */
import type { RequestListener } from 'node:http';
import { DEFAULT_CHAIN_ID } from '@pmm/protocol';
import {
  HaltView,
  createMetrics,
  httpRequestMetrics,
  redisHealthMetrics,
  redisKeys,
  roleServers,
  requestFrame,
  routeTable,
  sendJson,
  type Logger,
  type Metrics,
  type RedisClient,
  type Route,
  type Step,
} from '@pmm/core';
import type { GatewayConfig } from './config';
import { gatewayMetrics } from './gateway-metrics';
import { corsPolicy } from './http/cors-policy';
import { ROUTES, type PublicRoute, type RouteName } from './http/public-routes';
import { securityHeaders } from './http/security-headers';
import { v1Headers } from './http/v1-headers';
import { ApiKeyCache } from './keys/api-key-cache';
import { apiKeyStep } from './keys/api-key-step';
import { ApiKeyStore } from './keys/api-key-store';
import { AuthFailures } from './keys/auth-failures';
import { RateLimiter, type RateLimiterOptions } from './keys/rate-limiter';
import { rateLimitStep } from './keys/rate-limit-step';
import { BookCache } from './price/book-cache';
import { priceV1Step, priceV2Step } from './price/price-route';
import { signAdmission } from './sign/sign-admission';
import { signForwarder, signerAgent } from './sign/sign-forward';
import { signStep } from './sign/sign-route';
import { fillsStep } from './fills/fills-route';
import { priceStreamStep } from './stream/price-stream';
import { StreamHub } from './stream/stream-hub';
import { StreamSlots } from './stream/stream-slots';
import { docsRouteTable } from './docs/docs-routes';
import { loadOpenApiDocument, openApiStep } from './docs/openapi-route';
import { operatorPort } from './operator/operator-port';

/** The settings createApp uses (the rest of GatewayConfig is for main.ts). */
export type GatewayAppConfig = Pick<
  GatewayConfig,
  | 'redisKeyPrefix'
  | 'signerUrl'
  | 'internalToken'
  | 'servedChains'
  | 'corsOrigins'
  | 'requestTimeoutMs'
  | 'signDeadlineMs'
  | 'signerMaxInFlight'
  | 'signBodyLimit'
  | 'defaultRateLimit'
  | 'defaultRateWindowSeconds'
  | 'bookCacheMs'
  | 'keyCacheMs'
  | 'streamsPerKey'
  | 'streamHeartbeatMs'
  | 'streamLeaseMs'
  | 'authFailureLimit'
  | 'trustedProxies'
  | 'opsAllowedHosts'
  | 'opsToken'
  | 'consoleMaxViewers'
>;

export interface GatewayDeps {
  config: GatewayAppConfig;
  /** A fail-fast command connection (core createRedis role 'command'). */
  redis: RedisClient;
  /** A subscriber connection for `book-updated` (and the records' channels on one server); optional (the caches' ttls still apply). */
  subscriber?: RedisClient;
  /**
   * The records' server (core's redis-roles.ts): API keys, integrators, halts, the console's
   * ledger and sign rate, the audit trail and the ledger that `/v2/fills` reads, with a subscriber for `access-updated` and `halts-updated`. Default:
   * `redis` and `subscriber` (one server holds both roles).
   */
  records?: RedisClient;
  recordsSubscriber?: RedisClient;
  logger: Logger;
  /** Defaults to a fresh per-app registry. */
  metrics?: Metrics;
  /** The OpenAPI document's bytes; defaults to services/gateway/openapi/openapi.json. */
  openapiDocument?: Buffer;
  /** Rate-limiter tuning (tests and benchmarks); see keys/rate-limiter.ts. */
  rateLimiter?: RateLimiterOptions;
}

export interface Gateway {
  /** The public port's route table, a node:http request listener (serve it with core's listen()). */
  app: RequestListener;
  /** The operator port's route table: /healthz, /readyz, /metrics and the operator console. */
  opsApp: RequestListener;
  books: BookCache;
  keys: ApiKeyStore;
  metrics: Metrics;
  /** Subscribes to book and access updates; call before serving (resolves once subscribed). */
  start(): Promise<void>;
  /** Ends every open price stream and console stream (graceful shutdown: before closing the servers). */
  closeStreams(): void;
  /** Ends the streams, unsubscribes and closes the signer connections (not the Redis clients: the caller owns them). */
  close(): Promise<void>;
}

const HEALTHY = Buffer.from(JSON.stringify({ status: 'ok' }));

/** Builds the gateway (see the module comment). */
export function createApp(deps: GatewayDeps): Gateway {
  const { config, redis, logger } = deps;
  const records = deps.records ?? redis;
  const recordsSubscriber = deps.records ? deps.recordsSubscriber : deps.subscriber;
  const metrics = deps.metrics ?? createMetrics('gateway');
  const gauges = gatewayMetrics(metrics);
  // Redis's persistence and memory, for the alert rules: the gateway's operator port is the one
  // scrape every deployment has (deploy/prometheus/alerts.yml).
  redisHealthMetrics(
    metrics,
    roleServers(redis, records).map(({ client }) => client),
    'gateway',
  );
  const keys = new ApiKeyStore(records, config.redisKeyPrefix);
  const keyCache = new ApiKeyCache({
    store: keys,
    ttlMs: config.keyCacheMs,
    subscriber: recordsSubscriber,
    keys: redisKeys(config.redisKeyPrefix),
  });
  const books = new BookCache({
    redis,
    subscriber: deps.subscriber,
    prefix: config.redisKeyPrefix,
    chains: config.servedChains,
    ttlMs: config.bookCacheMs,
    logger,
  });
  // The operator's halts: what /v2/price and its stream may offer (the signer is the gate of signing).
  const halts = new HaltView({
    redis: records,
    subscriber: recordsSubscriber,
    keys: redisKeys(config.redisKeyPrefix),
    logger,
  });
  const agent = signerAgent(config.signerUrl);
  const openapi = deps.openapiDocument ?? loadOpenApiDocument();
  const v1 = config.servedChains.includes(DEFAULT_CHAIN_ID);
  const hub = new StreamHub(books, gauges.streams, config.streamHeartbeatMs, halts);
  const slots = new StreamSlots(redis, config.redisKeyPrefix, config.streamLeaseMs);

  // What every API route takes first: the key, then the integrator's rate limit.
  const keyStep = apiKeyStep({
    keys: keyCache,
    failures: new AuthFailures({ limit: config.authFailureLimit, trustedProxies: config.trustedProxies }),
    onRefused: gauges.rateLimited,
  });
  const limitStep = rateLimitStep({
    limiter: new RateLimiter(redis, config.redisKeyPrefix, deps.rateLimiter),
    defaults: { requests: config.defaultRateLimit, windowSeconds: config.defaultRateWindowSeconds },
    onLimited: gauges.rateLimited,
  });
  const access: Step[] = [keyStep, limitStep];
  // A sign's deadline and the bound on requests at the signer (docs/decisions/0071-past-capacity-a-fast-no.md).
  const admission = signAdmission({
    deadlineMs: config.signDeadlineMs,
    maxInFlight: config.signerMaxInFlight,
    metrics,
    logger,
  });
  const forward = signForwarder({
    signerUrl: config.signerUrl,
    internalToken: config.internalToken,
    agent,
    logger,
    admission,
    abandonAfterMs: config.requestTimeoutMs,
    onUpstreamError: gauges.upstreamError,
  });
  const sign = (path: string) => signStep({ path, bodyLimit: config.signBodyLimit, forward });
  // Each declared route's own step; the compiler checks that every route has one.
  const handlers: Record<RouteName, Step> = {
    price: priceV2Step(books, config.servedChains, halts),
    priceStream: priceStreamStep({
      hub,
      slots,
      servedChains: config.servedChains,
      streamsPerKey: config.streamsPerKey,
      leaseMs: config.streamLeaseMs,
      keys: keyCache,
      halts,
      onRefused: gauges.rateLimited,
    }),
    sign: sign(ROUTES.sign.path),
    fills: fillsStep({ records, keys: redisKeys(config.redisKeyPrefix), servedChains: config.servedChains }),
    openapi: openApiStep(openapi),
    v1Price: priceV1Step(books, halts),
    v1Sign: sign(ROUTES.v1Sign.path),
  };
  // A sign's deadline starts before its key; each later step is taken only while it can still be met.
  const stepsOf = (name: RouteName): Step[] =>
    name === 'sign' || name === 'v1Sign'
      ? [admission.start, keyStep, admission.gate('rate_limit'), limitStep, admission.gate('body'), handlers[name]]
      : [...access, handlers[name]];
  // The frame's request counter, shared with the door, whose refusals are among its 503s.
  const recorder = httpRequestMetrics(metrics);
  const security = securityHeaders();
  const apiRoutes: Route[] = (Object.entries(ROUTES) as [RouteName, PublicRoute][])
    .filter(([, route]) => v1 || !route.legacy)
    .map(([name, route]) => ({ ...route, cors: true, steps: stepsOf(name) }));
  const table = routeTable({
    frame: requestFrame({
      logger,
      recorder,
      headers: security,
      timeoutMs: config.requestTimeoutMs,
      onTimeout: gauges.timeout,
    }),
    cors: corsPolicy(config.corsOrigins),
    mounts: v1 ? [['/v1', v1Headers]] : [],
    routes: [
      { path: '/healthz', methods: ['GET', 'HEAD'], steps: [(_req, res) => sendJson(res, 200, HEALTHY)] },
      ...docsRouteTable(openapi),
      ...apiRoutes,
    ],
  });

  // Past capacity, a sign is refused at the door, before the table (sign-admission.ts).
  const door = admission.door({ headers: security, recorder, v1 });
  const app: RequestListener = (req, res) => {
    if (!door(req, res)) table(req, res);
  };

  const ops = operatorPort({
    logger,
    metrics,
    gauges,
    redis,
    records,
    redisKeyPrefix: config.redisKeyPrefix,
    books,
    hub,
    halts,
    chains: config.servedChains,
    signerUrl: config.signerUrl,
    internalToken: config.internalToken,
    allowedHosts: config.opsAllowedHosts,
    token: config.opsToken,
    consoleMaxViewers: config.consoleMaxViewers,
  });

  return {
    app,
    opsApp: ops.listener,
    books,
    keys,
    metrics,
    start: async () => {
      await keyCache.start();
      await books.start();
      await halts.start();
    },
    closeStreams: () => {
      hub.close();
      ops.console.close();
    },
    close: async () => {
      await keyCache.stop();
      hub.close();
      ops.console.close();
      slots.stop();
      await books.stop();
      await halts.stop();
      agent.destroy();
    },
  };
}
