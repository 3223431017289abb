/**
 * `createApp(deps)`: the signer's HTTP handler from explicit dependencies. main.ts wires the
 * real ones; tests pass real Redis-backed stores or fakes.
 */
import type { IncomingMessage, RequestListener, Server, ServerResponse } from 'node:http';
import express, { type Express } from 'express';
import { DEFAULT_CHAIN_ID } from '@pmm/protocol';
import {
  errorHandler,
  healthRoutes,
  httpMetrics,
  httpRequestMetrics,
  notFound,
  requestContext,
  serveSignLink,
  type SignLinkServer,
} from '@pmm/core';
import { signRoutes, signSteps } from './http/sign-routes';
import { createSignFastPath } from './http/sign-fast-path';
import { signLinkHandler } from './http/sign-link-handler';
import type { SignerDeps } from './signer-deps';

export type { SignerDeps } from './signer-deps';

/**
 * The signer's node:http listener; `express` is the Express part (everything but the fast
 * path); `serveSignLink(server)` adds the gateway's sign link (core sign-link/) to the server
 * that serves this listener.
 */
export type SignerApp = RequestListener & { express: Express; serveSignLink(server: Server): SignLinkServer };

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
  const paths = { steps, logger: deps.logger, http, v1: deps.servedChains.includes(DEFAULT_CHAIN_ID) };
  const fast = createSignFastPath(paths);
  const handler = (req: IncomingMessage, res: ServerResponse) => {
    if (!fast(req, res)) app(req, res);
  };
  return Object.assign(handler, {
    express: app,
    serveSignLink: (server: Server) =>
      serveSignLink(server, {
        authorize: steps.checkToken,
        handle: signLinkHandler(paths),
        maxBodyBytes: steps.bodyLimit,
        logger: deps.logger,
      }),
  });
}
