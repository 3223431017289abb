/**
 * `createApp(deps)`: the signer's Express app from explicit dependencies. main.ts wires the
 * real ones; tests pass real Redis-backed stores or fakes.
 */
import express, { type Express } from 'express';
import { errorHandler, healthRoutes, httpMetrics, notFound, requestContext } from '@pmm/core';
import { signRoutes } from './http/sign-routes';
import type { SignerDeps } from './signer-deps';

export type { SignerDeps } from './signer-deps';

/** Builds the app: request id and logger, metrics, /healthz /readyz /metrics, the sign routes, 404 and the error envelope. */
export function createApp(deps: SignerDeps): Express {
  const app = express();
  app.disable('x-powered-by');
  app.disable('etag');
  app.use(requestContext(deps.logger));
  app.use(httpMetrics(deps.metrics));
  app.use(healthRoutes({ checks: deps.readiness, registry: deps.metrics.registry }));
  app.use(signRoutes(deps));
  app.use(notFound());
  app.use(errorHandler());
  return app;
}
