/**
 * `POST /v2/swap/sign` and legacy `POST /v1/swap/sign`. Each route runs, in the order of
 * docs/decisions.md#error-precedence: internal token (401) · integrator (401) · body (413, 400) ·
 * parse (400 UNSUPPORTED_FIELD, 422) · the domain checks and signing (sign-quote.ts).
 * Wrong methods on these paths are 405, before the token check (404 and 405 come first).
 */
import { Router, type RequestHandler } from 'express';
import {
  ApiError,
  DEFAULT_CHAIN_ID,
  parseSignRequest,
  API_KEY_ID_HEADER,
  isSafeToken,
  v1DeprecationHeaders,
} from '@pmm/protocol';
import { contextOf, methodNotAllowed, type Metrics } from '@pmm/core';
import { signQuote, type SignQuoteContext } from '../domain/sign-quote';
import { signatureRecord } from '../domain/signature-record';
import { integratorOf, requireIntegrator } from './integrator-context';
import { requireInternalToken } from './internal-token';
import { jsonBody } from './json-body';
import type { SignerDeps } from '../signer-deps';

export const V2_SIGN_PATH = '/v2/swap/sign';
export const V1_SIGN_PATH = '/v1/swap/sign';

/** Headers of every /v1 response (docs/decisions.md#legacy-v1). */
const V1_HEADERS = v1DeprecationHeaders(V2_SIGN_PATH);
const deprecationHeaders: RequestHandler = (_req, res, next) => {
  for (const [name, value] of Object.entries(V1_HEADERS)) res.setHeader(name, value);
  next();
};

function signMetrics(metrics: Metrics) {
  return {
    latency: metrics.histogram(
      'signer_sign_duration_seconds',
      'Time to check, sign and encode one quote (after body parsing)',
      ['chain'] as const,
    ),
    signed: metrics.counter('signer_signatures_total', 'Quotes signed, by chain and route version', [
      'chain',
      'version',
    ] as const),
    auditFailures: metrics.counter(
      'signer_audit_failures_total',
      'Signatures withheld (503) because their audit record could not be written',
      ['chain'] as const,
    ),
  };
}

function signHandler(deps: SignerDeps, m: ReturnType<typeof signMetrics>, legacy: boolean): RequestHandler {
  const maxFee = deps.maxFee;
  const now = deps.now ?? Date.now;
  const version = legacy ? 'v1' : 'v2';
  return async (req, res) => {
    const parsed = parseSignRequest(req.body, { maxFee, allowChainId: !legacy });
    const integrator = integratorOf(res);
    const ctx: SignQuoteContext = {
      servedChains: deps.servedChains,
      registry: (chainId) => deps.pairs.get(chainId),
      integrator,
      signer: (chainId) => deps.signers.get(chainId),
      originRate: (chainId) => deps.originRates.get(chainId) ?? 0n,
      nowMs: now(),
      legacy,
    };
    const end = m.latency.startTimer({ chain: String(parsed.chainId) });
    const signed = signQuote(parsed, ctx);
    end();
    const keyId = req.headers[API_KEY_ID_HEADER];
    const record = signatureRecord(parsed, signed, {
      integratorId: integrator.record.id,
      keyId: isSafeToken(keyId, 64) ? keyId : '',
      requestId: contextOf(res).requestId,
      nowMs: ctx.nowMs,
    });
    // INVARIANT: no signature leaves without its audit record (an unrecorded one must not exist).
    try {
      await deps.audit.record(record);
    } catch (err) {
      m.auditFailures.inc({ chain: String(signed.chainId) });
      res.locals.log?.error('audit write failed; signature withheld', {
        chainId: signed.chainId,
        error: err instanceof Error ? err.message : String(err),
      });
      throw new ApiError('SERVICE_UNAVAILABLE', 'the signature could not be recorded; retry shortly');
    }
    m.signed.inc({ chain: String(signed.chainId), version });
    // Field names avoid "token": the logger redacts any field whose name contains it.
    res.locals.log?.info('quote signed', {
      chainId: signed.chainId,
      assetIn: parsed.tokenIn,
      assetOut: parsed.tokenOut,
      fee: parsed.fee.toString(),
      userAddress: parsed.userAddress,
      amountIn: parsed.amountIn?.toString(),
      originRate: signed.originRate.toString(),
      timestamp: signed.response.timestamp,
      digest: signed.digest,
      signer: signed.signerAddress,
    });
    res.setHeader('Cache-Control', 'no-store');
    res.json(signed.response);
  };
}

/** The sign routes; /v1 is mounted only when chain 8453 (its only chain) is served. */
export function signRoutes(deps: SignerDeps): Router {
  const router = Router();
  const m = signMetrics(deps.metrics);
  const token = requireInternalToken(deps.internalToken);
  const body = jsonBody(deps.bodyLimitBytes);
  router
    .route(V2_SIGN_PATH)
    .post(token, requireIntegrator(deps.integrators), ...body, signHandler(deps, m, false))
    .all(methodNotAllowed(['POST']));
  if (deps.servedChains.includes(DEFAULT_CHAIN_ID)) {
    router
      .route(V1_SIGN_PATH)
      .all(deprecationHeaders)
      .post(token, requireIntegrator(deps.integrators), ...body, signHandler(deps, m, true))
      .all(methodNotAllowed(['POST']));
  }
  return router;
}
