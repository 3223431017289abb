/**
 * `POST /v2/swap/sign` and legacy `POST /v1/swap/sign`. Each route runs, in the order of
 * docs/decisions.md#error-precedence: internal token (401) · integrator (401) · body (413, 400) ·
 * parse (400 UNSUPPORTED_FIELD, 422) · the domain checks and signing (sign-quote.ts).
 * Wrong methods on these paths are 405, before the token check (404 and 405 come first).
 */
import type { IncomingHttpHeaders } from 'node:http';
import { Router, type RequestHandler } from 'express';
import {
  API_KEY_ID_HEADER,
  ApiError,
  DEFAULT_CHAIN_ID,
  isSafeToken,
  parseSignRequest,
  v1DeprecationHeaders,
} from '@pmm/protocol';
import { methodNotAllowed, type EnvelopeTarget, type Logger, type MaybePromise, type Metrics } from '@pmm/core';
import { signQuote, type SignQuoteContext } from '../domain/sign-quote';
import { signatureRecord } from '../domain/signature-record';
import type { IntegratorView } from '../store/integrator-store';
import { integratorOf, requireIntegrator, resolveIntegrator } from './integrator-context';
import { internalTokenCheck } from './internal-token';
import { SIGN_BODY_LIMIT_BYTES, jsonBody } from './json-body';
import type { SignerDeps } from '../signer-deps';

export const V2_SIGN_PATH = '/v2/swap/sign';
export const V1_SIGN_PATH = '/v1/swap/sign';

/** Headers of every /v1 response (docs/decisions.md#legacy-v1). */
const V1_HEADERS = v1DeprecationHeaders(V2_SIGN_PATH);
export function setDeprecationHeaders(res: EnvelopeTarget): void {
  for (const [name, value] of Object.entries(V1_HEADERS)) res.setHeader(name, value);
}
const deprecationHeaders: RequestHandler = (_req, res, next) => {
  setDeprecationHeaders(res);
  next();
};

function signMetrics(metrics: Metrics) {
  const latency = metrics.histogram(
    'signer_sign_duration_seconds',
    'Time to check, sign and encode one quote (after body parsing)',
    ['chain'] as const,
  );
  const signed = metrics.counter('signer_signatures_total', 'Quotes signed, by chain and route version', [
    'chain',
    'version',
  ] as const);
  const auditFailures = metrics.counter(
    'signer_audit_failures_total',
    'Signatures withheld (503) because their audit record could not be written',
    ['chain'] as const,
  );
  // Label-bound children, cached: prom-client hashes a labels object on every call otherwise.
  const latencyOf = new Map<number, { observe(v: number): void }>();
  const signedOf = new Map<string, { inc(): void }>();
  return {
    latency(chainId: number, seconds: number): void {
      let h = latencyOf.get(chainId);
      if (!h) latencyOf.set(chainId, (h = latency.labels(String(chainId))));
      h.observe(seconds);
    },
    signed(chainId: number, legacy: boolean): void {
      const version = legacy ? 'v1' : 'v2';
      const key = `${chainId} ${version}`;
      let c = signedOf.get(key);
      if (!c) signedOf.set(key, (c = signed.labels(String(chainId), version)));
      c.inc();
    },
    auditFailure(chainId: number): void {
      auditFailures.inc({ chain: String(chainId) });
    },
  };
}

/** What a sign step knows of its request besides the body. */
export interface SignRequestContext {
  headers: IncomingHttpHeaders;
  requestId: string;
  /** The request's logger (made on first use by the fast path). */
  log(): Logger | undefined;
}

/**
 * The steps of a sign request, built once per app and shared by the Express routes (below)
 * and the node:http fast path (sign-fast-path.ts), so both answer the same bytes.
 */
export interface SignSteps {
  checkToken(headers: IncomingHttpHeaders): void;
  integrator(headers: IncomingHttpHeaders, log: () => Logger | undefined): MaybePromise<IntegratorView>;
  bodyLimit: number;
  /**
   * The JSON text of the 200 for a parsed body, once its audit record is written; throws or
   * rejects with the ApiError of the first failed check.
   */
  sign(body: unknown, integrator: IntegratorView, legacy: boolean, req: SignRequestContext): Promise<string>;
}

export function signSteps(deps: SignerDeps): SignSteps {
  const m = signMetrics(deps.metrics);
  const maxFee = deps.maxFee;
  const now = deps.now ?? Date.now;
  const checkToken = internalTokenCheck(deps.internalToken);
  const logInfo = deps.logger.isLevelEnabled('info');
  return {
    checkToken,
    integrator: (headers, log) => resolveIntegrator(deps.integrators, headers, log),
    bodyLimit: deps.bodyLimitBytes ?? SIGN_BODY_LIMIT_BYTES,
    async sign(body, integrator, legacy, req) {
      const parsed = parseSignRequest(body, { maxFee, allowChainId: !legacy });
      const ctx: SignQuoteContext = {
        servedChains: deps.servedChains,
        registry: (chainId) => deps.pairs.get(chainId),
        integrator,
        signer: (chainId) => deps.signers.get(chainId),
        originRate: (chainId) => deps.originRates.get(chainId) ?? 0n,
        nowMs: now(),
        legacy,
      };
      const started = process.hrtime.bigint();
      const signed = signQuote(parsed, ctx);
      m.latency(parsed.chainId, Number(process.hrtime.bigint() - started) / 1e9);
      const keyId = req.headers[API_KEY_ID_HEADER];
      const record = signatureRecord(parsed, signed, {
        integratorId: integrator.record.id,
        keyId: isSafeToken(keyId, 64) ? keyId : '',
        requestId: req.requestId,
        nowMs: ctx.nowMs,
      });
      // INVARIANT: no signature leaves without its audit record (an unrecorded one must not exist).
      try {
        await deps.audit.record(record);
      } catch (err) {
        m.auditFailure(signed.chainId);
        req.log()?.error('audit write failed; signature withheld', {
          chainId: signed.chainId,
          error: err instanceof Error ? err.message : String(err),
        });
        throw new ApiError('SERVICE_UNAVAILABLE', 'the signature could not be recorded; retry shortly');
      }
      m.signed(signed.chainId, legacy);
      // Field names avoid "token": the logger redacts any field whose name contains it.
      if (logInfo)
        req.log()?.info('quote signed', {
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
      return JSON.stringify(signed.response);
    },
  };
}

/** Headers of a signed quote (what Express's res.json writes, plus no-store). */
export function sendSigned(res: EnvelopeTarget, json: string): void {
  res.setHeader('Cache-Control', 'no-store');
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', Buffer.byteLength(json));
  res.end(json);
}

function signHandler(steps: SignSteps, legacy: boolean): RequestHandler {
  return async (req, res) => {
    const locals = res.locals as { requestId: string; log?: Logger };
    const json = await steps.sign(req.body, integratorOf(res), legacy, {
      headers: req.headers,
      requestId: locals.requestId,
      log: () => locals.log,
    });
    sendSigned(res, json);
  };
}

/** The sign routes; /v1 is mounted only when chain 8453 (its only chain) is served. */
export function signRoutes(deps: SignerDeps, steps: SignSteps): Router {
  const router = Router();
  const token: RequestHandler = (req, _res, next) => {
    try {
      steps.checkToken(req.headers);
    } catch (err) {
      return next(err);
    }
    next();
  };
  const body = jsonBody(steps.bodyLimit);
  router
    .route(V2_SIGN_PATH)
    .post(token, requireIntegrator(deps.integrators), ...body, signHandler(steps, false))
    .all(methodNotAllowed(['POST']));
  if (deps.servedChains.includes(DEFAULT_CHAIN_ID)) {
    router
      .route(V1_SIGN_PATH)
      .all(deprecationHeaders)
      .post(token, requireIntegrator(deps.integrators), ...body, signHandler(steps, true))
      .all(methodNotAllowed(['POST']));
  }
  return router;
}
