/**
 * `createApp(deps)`: the signer's HTTP handler from explicit dependencies, one route table (core
 * route-table.ts). start-signer.ts wires the real ones; tests pass real Redis-backed stores or
 * fakes.
 *
 * Routes: `/healthz`, `/readyz`, `/metrics` (probes and scrapes, behind core's operatorGuard: Host
 * names, optional OPS_TOKEN) · `GET /internal/access`
 * (the gateway's readiness check of its token) · `POST /v2/swap/sign` and `/v1/swap/sign`
 * (http/sign-route.ts, the HTTP adapter of domain/sign-use-case.ts). Every route but the health
 * ones takes the internal token first; the table answers 404, 405 and the error envelope.
 */
import type { RequestListener } from 'node:http';
import { DEFAULT_CHAIN_ID, SIGNER_ACCESS_PATH, v1DeprecationHeaders } from '@pmm/protocol';
import { healthRoutes, operatorGuard, requestFrame, routeTable, type Route, type Step } from '@pmm/core';
import { createSignUseCase } from './domain/sign-use-case';
import { signMetrics } from './domain/sign-metrics';
import { DEFAULT_MAX_SIGN_DEADLINE_MS, DEFAULT_MAX_SIGNS_IN_FLIGHT, signerAdmission } from './domain/sign-admission';
import { signStep, V1_SIGN_PATH, V2_SIGN_PATH } from './http/sign-route';
import { internalTokenStep } from './http/internal-token';
import { SIGN_BODY_LIMIT_BYTES } from './http/json-body';
import type { SignerDeps } from './signer-deps';

export type { SignerDeps } from './signer-deps';

const V1_HEADERS = Object.entries(v1DeprecationHeaders(V2_SIGN_PATH));
const v1Headers: Step = (_req, res, next) => {
  for (const [name, value] of V1_HEADERS) res.setHeader(name, value);
  next();
};

export function createApp(deps: SignerDeps): RequestListener {
  // docs/decisions/0071-past-capacity-a-fast-no.md
  const admission = signerAdmission({
    maxInFlight: deps.maxSignsInFlight ?? DEFAULT_MAX_SIGNS_IN_FLIGHT,
    maxDeadlineMs: deps.maxSignDeadlineMs ?? DEFAULT_MAX_SIGN_DEADLINE_MS,
    metrics: deps.metrics,
    logger: deps.logger,
  });
  const sign = createSignUseCase({
    servedChains: deps.servedChains,
    maxFee: deps.maxFee,
    signers: deps.signers,
    originRates: deps.originRates,
    quoteValiditySeconds: deps.quoteValiditySeconds,
    pairs: deps.pairs,
    audit: deps.audit,
    halts: deps.halts,
    references: deps.references,
    firmQuotes: deps.firmQuotes,
    dailySignatureQuota: deps.dailySignatureQuota,
    metrics: signMetrics(deps.metrics, deps.servedChains),
    admission,
    logSigned: deps.logger.isLevelEnabled('debug'),
    now: deps.now,
  });
  const token = internalTokenStep(deps.internalToken);
  const signing = (legacy: boolean) =>
    signStep({
      sign,
      integrators: deps.integrators,
      bodyLimitBytes: deps.bodyLimitBytes ?? SIGN_BODY_LIMIT_BYTES,
      legacy,
      admission,
    });
  const routes: Route[] = [
    ...healthRoutes({
      checks: deps.readiness,
      registry: deps.metrics.registry,
      guard: operatorGuard(deps.operatorAccess ?? { allowedHosts: [] }),
    }),
    {
      path: SIGNER_ACCESS_PATH,
      methods: ['GET', 'HEAD'],
      steps: [token, (_req, res) => void res.writeHead(204).end()],
    },
    { path: V2_SIGN_PATH, methods: ['POST'], steps: [token, signing(false)] },
  ];
  // /v1 is served only when chain 8453, its only chain, is.
  if (deps.servedChains.includes(DEFAULT_CHAIN_ID))
    routes.push({ path: V1_SIGN_PATH, methods: ['POST'], steps: [v1Headers, token, signing(true)] });
  return routeTable({ frame: requestFrame({ logger: deps.logger, metrics: deps.metrics }), routes });
}
