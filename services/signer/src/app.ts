/**
 * `createApp(deps)`: the signer's HTTP handler from explicit dependencies. main.ts wires the
 * real ones; tests pass real Redis-backed stores or fakes.
 */
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import express, { type Express } from 'express';
import { DEFAULT_CHAIN_ID } from '@pmm/protocol';
import { errorHandler, healthRoutes, httpMetrics, httpRequestMetrics, notFound, requestContext } from '@pmm/core';
import { signRoutes, signSteps } from './http/sign-routes';
import { createSignFastPath } from './http/sign-fast-path';
import type { SignerDeps } from './signer-deps';

export type { SignerDeps } from './signer-deps';

/** The signer's node:http listener; `express` is the Express part (everything but the fast path). */
export type SignerApp = RequestListener & { express: Express };

/**
 * Builds the handler: the sign fast path (http/sign-fast-path.ts) in front of the Express app
 * (request id and logger, metrics, /healthz /readyz /metrics, the sign routes, 404 and the
 * error envelope). Both record into the same metrics and sign through the same steps.
 */
export function createApp(deps: SignerDeps): SignerApp {
  const http = httpRequestMetrics(deps.metrics);
  const steps = signSteps(deps);
  const app = express();
  app.disable('x-powered-by');
  app.disable('etag');
  app.use(requestContext(deps.logger));
  app.use(httpMetrics(http));
  app.use(healthRoutes({ checks: deps.readiness, registry: deps.metrics.registry }));
  app.use(signRoutes(deps, steps));
  app.use(notFound());
  app.use(errorHandler());
  const fast = createSignFastPath({
    steps,
    logger: deps.logger,
    http,
    v1: deps.servedChains.includes(DEFAULT_CHAIN_ID),
  });
  const handler = (req: IncomingMessage, res: ServerResponse) => {
    if (!fast(req, res)) app(req, res);
  };
  return Object.assign(handler, { express: app });
}
