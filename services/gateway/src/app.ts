/**
 * The gateway's Express apps, built from explicit dependencies:
 * - `app`, the public API: /v2/price, /v2/swap/sign, /v2/openapi.json, legacy /v1/price and
 *   /v1/swap/sign, and, with no key, /healthz and the API reference page /docs;
 * - `opsApp`, the operator port: /healthz, /readyz (Redis and signer), /metrics, and the
 *   operator console (/console, console/console-routes.ts).
 *
 * Order of checks (docs/decisions.md#error-precedence): unknown route 404 → wrong method 405
 * → API key 401 → rate limit 429 → body size 413 → the route's own validation. Express
 * routing gives the first two (a route answers only its methods; `.all` after them is the
 * 405); each route then chains guard, limiter, body limit and handler in that order.
 */
import { request as httpRequest, type IncomingMessage, type RequestListener, type ServerResponse } from 'node:http';
import { request as httpsRequest } from 'node:https';
import express, { type ErrorRequestHandler, type Express, type RequestHandler } from 'express';
import { DEFAULT_CHAIN_ID, INTERNAL_TOKEN_HEADER, SIGNER_ACCESS_PATH } from '@pmm/protocol';
import {
  createMetrics,
  redisHealthMetrics,
  errorHandler,
  healthRoutes,
  methodNotAllowed,
  notFound,
  redisKeys,
  requestContext,
  type Logger,
  type Metrics,
  type RedisClient,
} from '@pmm/core';
import type { GatewayConfig } from './config';
import { ApiKeyStore } from './store/api-key-store';
import { ApiKeyCache } from './store/api-key-cache';
import { BookCache } from './store/book-cache';
import { RateLimiter, type RateLimiterOptions } from './store/rate-limiter';
import { apiKeyGuard } from './http/api-key-guard';
import { rateLimit } from './http/rate-limit';
import { signForwarder, signerAgent } from './http/sign-forward';
import { createSignRoute } from './http/sign-route';
import { priceV1, priceV2 } from './http/price-routes';
import { priceStream } from './http/price-stream';
import { StreamHub } from './http/stream-hub';
import { StreamSlots } from './store/stream-slots';
import { createRequestFrame } from './http/request-frame';
import { AuthFailures } from './http/auth-failures';
import { createFastPath } from './http/fast-path';
import { securityHeaders } from './http/security-headers';
import { deprecationHeaders } from './http/deprecation';
import { loadOpenApiDocument, openApiRoute } from './http/openapi-route';
import { corsPolicy } from './http/cors-policy';
import { DOCS_DOCUMENT_PATH, DOCS_PATH, docsRoutes, REDOC_BUNDLE_PATH } from './http/docs-routes';
import { ROUTES, type PublicRoute } from './http/routes';
import { gatewayMetrics } from './gateway-metrics';
import { ConsoleFeed } from './console/console-feed';
import { consoleRoutes } from './console/console-routes';
import { consoleStatus } from './console/console-status';

/** The settings createApp uses (the rest of GatewayConfig is for main.ts). */
export type GatewayAppConfig = Pick<
  GatewayConfig,
  | 'redisKeyPrefix'
  | 'signerUrl'
  | 'internalToken'
  | 'servedChains'
  | 'corsOrigins'
  | 'requestTimeoutMs'
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
>;

export interface GatewayDeps {
  config: GatewayAppConfig;
  /** A fail-fast command connection (core createRedis role 'command'). */
  redis: RedisClient;
  /** A subscriber connection for `book-updated` and `access-updated`; optional (the caches' ttls still apply). */
  subscriber?: RedisClient;
  logger: Logger;
  /** Defaults to a fresh per-app registry. */
  metrics?: Metrics;
  /** The OpenAPI document's bytes; defaults to services/gateway/openapi/openapi.json. */
  openapiDocument?: Buffer;
  /** Rate-limiter tuning (tests and benchmarks); see store/rate-limiter.ts. */
  rateLimiter?: RateLimiterOptions;
}

export interface Gateway {
  /**
   * The public API as a node:http request listener: the fast path for GET /v2/price and
   * /v1/price (http/fast-path.ts), the sign route for POST /v2/swap/sign and /v1/swap/sign
   * (http/sign-route.ts), Express for everything else. Serve THIS (http.createServer).
   */
  app: RequestListener;
  /** The Express part of the public API (everything but the price fast path and the sign route). */
  expressApp: Express;
  /** /healthz, /readyz, /metrics and the operator console, for the operator port. */
  opsApp: Express;
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

function baseApp(): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('case sensitive routing', true);
  app.set('strict routing', true);
  return app;
}

/** After core's errorHandler: an error raised after the answer was sent is dropped (logged there). */
const lateErrors: ErrorRequestHandler = (_err, _req, res, _next) => {
  if (!res.writableEnded) res.destroy();
};

/** GET `${base}${path}` with a 1 s timeout; resolves on `expected`. */
function probe(base: string, path: string, expected: number, headers: Record<string, string> = {}): Promise<void> {
  const url = new URL(path, base);
  const request = url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'GET', timeout: 1_000, headers }, (res) => {
      res.resume();
      if (res.statusCode === expected) resolve();
      else reject(new Error(`${path}: status ${res.statusCode}`));
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', (err) => reject(new Error((err as NodeJS.ErrnoException).code ?? 'unreachable')));
    req.end();
  });
}

/** Builds the gateway (see the module comment). */
export function createApp(deps: GatewayDeps): Gateway {
  const { config, redis, logger } = deps;
  const metrics = deps.metrics ?? createMetrics('gateway');
  const gm = gatewayMetrics(metrics);
  // Redis's persistence and memory, for the alert rules: the gateway's operator port is the one
  // scrape every deployment has (deploy/prometheus/alerts.yml).
  redisHealthMetrics(metrics, redis, 'gateway');
  const keys = new ApiKeyStore(redis, config.redisKeyPrefix);
  const keyCache = new ApiKeyCache({
    store: keys,
    ttlMs: config.keyCacheMs,
    subscriber: deps.subscriber,
    keys: redisKeys(config.redisKeyPrefix),
  });
  const limiter = new RateLimiter(redis, config.redisKeyPrefix, deps.rateLimiter);
  const books = new BookCache({
    redis,
    subscriber: deps.subscriber,
    prefix: config.redisKeyPrefix,
    chains: config.servedChains,
    ttlMs: config.bookCacheMs,
    logger,
  });
  const agent = signerAgent(config.signerUrl);
  const forward = signForwarder({
    signerUrl: config.signerUrl,
    internalToken: config.internalToken,
    agent,
    logger,
    onUpstreamError: gm.upstreamError,
  });
  const openapi = deps.openapiDocument ?? loadOpenApiDocument();
  const v1 = config.servedChains.includes(DEFAULT_CHAIN_ID);

  const rate = {
    limiter,
    defaults: { requests: config.defaultRateLimit, windowSeconds: config.defaultRateWindowSeconds },
    onLimited: gm.rateLimited,
  };
  const authed: RequestHandler[] = [apiKeyGuard(keyCache), rateLimit(rate)];
  const authFailures = new AuthFailures({ limit: config.authFailureLimit, trustedProxies: config.trustedProxies });
  const frame = createRequestFrame({
    logger,
    metrics,
    timeoutMs: config.requestTimeoutMs,
    headers: securityHeaders(),
    onTimeout: gm.timeout,
    onFinish: (req, status) => {
      if (status === 401) authFailures.record(req);
    },
  });

  const app = baseApp();
  app.use(frame.middleware);
  const served = (Object.values(ROUTES) as PublicRoute[]).filter((route) => v1 || !route.legacy);
  const publicPaths = new Set<string>(served.map((route) => route.path));
  const cors = corsPolicy(config.corsOrigins, publicPaths);
  if (cors) app.use(cors);

  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  const docs = docsRoutes(openapi);
  const docsMethods = methodNotAllowed(['GET', 'HEAD']);
  app.route(DOCS_PATH).get(docs.page).all(docsMethods);
  app.route(DOCS_DOCUMENT_PATH).get(docs.document).all(docsMethods);
  app.route(REDOC_BUNDLE_PATH).get(docs.bundle).all(docsMethods);
  app
    .route(ROUTES.price.path)
    .get(...authed, priceV2(books, config.servedChains))
    .all(methodNotAllowed([...ROUTES.price.methods]));
  const streams = new StreamHub(books, gm.streams, config.streamHeartbeatMs);
  const slots = new StreamSlots(redis, config.redisKeyPrefix, config.streamLeaseMs);
  app
    .route(ROUTES.priceStream.path)
    .get(
      ...authed,
      priceStream({
        hub: streams,
        slots,
        servedChains: config.servedChains,
        streamsPerKey: config.streamsPerKey,
        leaseMs: config.streamLeaseMs,
        keys: keyCache,
        onRefused: gm.rateLimited,
      }),
    )
    .all(methodNotAllowed([...ROUTES.priceStream.methods]));
  // POST is the sign route's (http/sign-route.ts): only the other methods reach Express.
  app.route(ROUTES.sign.path).all(methodNotAllowed([...ROUTES.sign.methods]));
  app
    .route(ROUTES.openapi.path)
    .get(...authed, openApiRoute(openapi))
    .all(methodNotAllowed([...ROUTES.openapi.methods]));
  if (v1) {
    app.use('/v1', deprecationHeaders());
    app
      .route(ROUTES.v1Price.path)
      .get(...authed, priceV1(books))
      .all(methodNotAllowed([...ROUTES.v1Price.methods]));
    app.route(ROUTES.v1Sign.path).all(methodNotAllowed([...ROUTES.v1Sign.methods]));
  }
  app.use(notFound());
  app.use(errorHandler());
  app.use(lateErrors);

  const readiness = {
    redis: async () => {
      await redis.ping();
    },
    // Its HTTP health, then whether it accepts our internal token (what sign requests need:
    // a signer with another INTERNAL_TOKEN is healthy but refuses every one).
    signer: async () => {
      await probe(config.signerUrl, '/healthz', 200);
      await probe(config.signerUrl, SIGNER_ACCESS_PATH, 204, {
        [INTERNAL_TOKEN_HEADER]: config.internalToken,
      }).catch((err: Error) => {
        throw err.message.endsWith('status 401') ? new Error('the signer refused the internal token (HTTP 401)') : err;
      });
    },
  };
  const consoleFeed = new ConsoleFeed({
    hub: streams,
    chains: config.servedChains,
    status: consoleStatus({
      redis,
      keys: redisKeys(config.redisKeyPrefix),
      chains: config.servedChains,
      readiness,
    }),
  });
  const opsApp = baseApp();
  opsApp.use(requestContext(logger));
  opsApp.get('/metrics', gm.refreshBookGauges(books, config.servedChains));
  opsApp.use(healthRoutes({ checks: readiness, registry: metrics.registry }));
  opsApp.use(consoleRoutes(consoleFeed));
  opsApp.use(notFound());
  opsApp.use(errorHandler());
  opsApp.use(lateErrors);

  const fast = createFastPath({
    frame,
    keys: keyCache,
    rate,
    books,
    servedChains: config.servedChains,
    v1,
    cors: cors !== undefined,
  });
  const sign = createSignRoute({
    frame,
    keys: keyCache,
    rate,
    bodyLimit: config.signBodyLimit,
    v1,
    cors,
    forward,
  });
  const handler: RequestListener = (req: IncomingMessage, res: ServerResponse) => {
    if (authFailures.refuse(req, res, frame, gm.rateLimited)) return;
    if (!fast(req, res) && !sign(req, res)) app(req, res);
  };

  return {
    app: handler,
    expressApp: app,
    opsApp,
    books,
    keys,
    metrics,
    start: async () => {
      await keyCache.start();
      await books.start();
    },
    closeStreams: () => {
      streams.close();
      consoleFeed.close();
    },
    close: async () => {
      await keyCache.stop();
      streams.close();
      consoleFeed.close();
      slots.stop();
      await books.stop();
      agent.destroy();
    },
  };
}
