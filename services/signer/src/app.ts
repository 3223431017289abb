/**
 * `createApp(deps)`: the signer's HTTP handler from explicit dependencies. start-signer.ts wires
 * the real ones; tests pass real Redis-backed stores or fakes.
 *
 * The sign route (http/sign-route.ts, the HTTP adapter of domain/sign-use-case.ts) takes POST
 * /v2/swap/sign and /v1/swap/sign; Express everything else, in order: request id and logger ·
 * metrics · /healthz /readyz /metrics · /internal/access and the 405s of the sign paths
 * (http/internal-routes.ts) · 404 · the error envelope.
 */
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import express from 'express';
import { DEFAULT_CHAIN_ID } from '@pmm/protocol';
import { errorHandler, healthRoutes, httpMetrics, httpRequestMetrics, notFound, requestContext } from '@pmm/core';
import { createSignUseCase } from './domain/sign-use-case';
import { signMetrics } from './domain/sign-metrics';
import { createSignRoute } from './http/sign-route';
import { internalRoutes } from './http/internal-routes';
import { SIGN_BODY_LIMIT_BYTES } from './http/json-body';
import type { SignerDeps } from './signer-deps';

export type { SignerDeps } from './signer-deps';

export function createApp(deps: SignerDeps): RequestListener {
  const sign = createSignUseCase({
    servedChains: deps.servedChains,
    maxFee: deps.maxFee,
    signers: deps.signers,
    originRates: deps.originRates,
    quoteValiditySeconds: deps.quoteValiditySeconds,
    pairs: deps.pairs,
    audit: deps.audit,
    metrics: signMetrics(deps.metrics, deps.servedChains),
    logSigned: deps.logger.isLevelEnabled('info'),
    now: deps.now,
  });
  const http = httpRequestMetrics(deps.metrics);
  const v1 = deps.servedChains.includes(DEFAULT_CHAIN_ID);
  const app = express();
  app.disable('x-powered-by');
  app.disable('etag');
  app.use(requestContext(deps.logger));
  app.use(httpMetrics(http));
  app.use(healthRoutes({ checks: deps.readiness, registry: deps.metrics.registry }));
  app.use(internalRoutes({ internalToken: deps.internalToken, v1 }));
  app.use(notFound());
  app.use(errorHandler());
  const signRoute = createSignRoute({
    sign,
    integrators: deps.integrators,
    internalToken: deps.internalToken,
    bodyLimitBytes: deps.bodyLimitBytes ?? SIGN_BODY_LIMIT_BYTES,
    v1,
    logger: deps.logger,
    http,
  });
  return (req: IncomingMessage, res: ServerResponse) => {
    if (!signRoute(req, res)) app(req, res);
  };
}
