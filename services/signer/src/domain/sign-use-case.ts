/**
 * The sign use case, free of any transport: a request's JSON value and the integrator the
 * gateway authenticated in, the JSON text of the answer (or a thrown ApiError) out. The HTTP
 * route (http/sign-route.ts) only adapts a request to it; its unit tests drive it directly.
 *
 * Steps, in the order of docs/decisions/0001-error-precedence.md (each throws the first failure):
 *   validate  parseSignRequest: 400 UNSUPPORTED_FIELD, 422 VALIDATION_ERROR
 *   halts     503 HALTED when an operator's halt covers the request; 503 SERVICE_UNAVAILABLE
 *             when the halts could not be read within the last 800 ms (fail closed)
 *   authorize checkSignRequest: chain, pair registry, pair, whitelist (sign-quote.ts)
 *   reference a pair the indexer withholds against its reference: 503 PAIR_UNAVAILABLE with
 *             Retry-After; one with a reference and no fresh standing: 503 SERVICE_UNAVAILABLE
 *             (reference-check.ts)
 *   firm quote with amountIn on /v2: the exact amountOut at the served book's block
 *             (chain/firm-quotes.ts; 503 SERVICE_UNAVAILABLE within its deadline when there
 *             is none, 422 when the router cannot fill the amount): nothing is signed before it;
 *             503 PAIR_UNAVAILABLE when its price is better for the taker than the pair's band
 *   digest + sign  signCheckedQuote: the swap digest, its signature, the calldata
 *   record    the audit record, stored before anything leaves, within the integrator's daily
 *             quota per chain (429 QUOTA_EXCEEDED past it; 503 when it cannot be stored)
 *   answer    the response body
 *
 * With the sign's deadline (the gateway's, docs/decisions/0071-past-capacity-a-fast-no.md) each
 * step that waits is started only while what is left covers it, else 503 SERVICE_UNAVAILABLE
 * (domain/sign-admission.ts): the firm quote (past the bound on a chain's firm quotes in flight
 * too; it is given the deadline less what the record takes lately), then the signature and its
 * record. A record written after the deadline withholds the answer all the same: that
 * signature was never given out, and its record simply exists.
 *
 * INVARIANT: no signature leaves before its audit record is stored. An unrecorded signature
 * would be money the settlement cannot attribute; so a failed write withholds the answer.
 */
import { ApiError, netOfFee, parseSignRequest } from '@pmm/protocol';
import {
  DAY_MS,
  deadlineRefusal,
  haltedError,
  haltScopeKind,
  InFlightLimit,
  overloadRefusal,
  StepTime,
  scopeCoversSign,
  type Deadline,
  type Logger,
} from '@pmm/core';
import type { IntegratorView } from '../store/integrator-store';
import type { SignerAdmission } from './sign-admission';
import { checkSignRequest, signCheckedQuote, type FirmAmount, type SignQuoteContext } from './sign-quote';
import { signatureRecord } from './signature-record';
import type { SignMetrics } from './sign-metrics';
import { QuotaExceededError } from '../store/audit-trail';
import type { SignerDeps } from '../signer-deps';
import { checkFirmPrice, checkStanding, pairOfSign } from './reference-check';
import type { FirmQuote, FirmQuoteRequest, FirmQuotes } from '../chain/firm-quotes';

export interface SignCommand {
  /** The request body's JSON value (not yet validated). */
  body: unknown;
  /** The integrator behind the request's API key, enabled. */
  integrator: IntegratorView;
  /** Legacy `/v1` semantics (sign-quote.ts). */
  legacy: boolean;
  /** The API key's public id ('' when unknown), for the audit record. */
  keyId: string;
  /** The service's own id of the request, and the client's when it sent one (audit record). */
  requestId: string;
  clientRequestId?: string;
  /** When the answer is due (the gateway's deadline); none on a direct call. */
  deadline?: Deadline;
  /** The request's logger, made on first use. */
  log(): Logger | undefined;
}

/** What the use case needs of the signer's dependencies (signer-deps.ts), plus its metrics. */
export type SignUseCaseDeps = Pick<
  SignerDeps,
  | 'servedChains'
  | 'maxFee'
  | 'signers'
  | 'originRates'
  | 'quoteValiditySeconds'
  | 'pairs'
  | 'audit'
  | 'halts'
  | 'dailySignatureQuota'
  | 'firmQuotes'
  | 'references'
  | 'now'
> & {
  metrics: SignMetrics;
  /** The bounds and step times the deadline is checked with (sign-admission.ts); default: no bound. */
  admission?: SignUseCaseAdmission;
  /**
   * Whether each signature gets a debug log line (checked once, not per request). Not at info:
   * the audit trail is the record of every signature, and the line cost the signer about 100 µs
   * of CPU per sign at 500/s (docs/decisions/0025-the-shapes-floor-and-what-is-ours.md).
   */
  logSigned: boolean;
};

/** What the use case needs of the signer's admission. */
export type SignUseCaseAdmission = Pick<SignerAdmission, 'firmQuotes' | 'recordTime'>;

/** No bound on firm quotes (a use case built without the signer's admission: benchmarks, tests). */
function unbounded(): SignUseCaseAdmission {
  const none = new InFlightLimit(Number.MAX_SAFE_INTEGER);
  const recordTime = new StepTime(0);
  return { firmQuotes: () => none, recordTime };
}

/** The answer of a signed quote: the 200's JSON text. */
export type SignUseCase = (cmd: SignCommand) => Promise<string>;

export function createSignUseCase(deps: SignUseCaseDeps): SignUseCase {
  const { metrics: m, maxFee } = deps;
  const admission = deps.admission ?? unbounded();
  const now = deps.now ?? Date.now;
  const firmQuote = firmQuoteWithin(deps.firmQuotes, admission);
  return async (cmd) => {
    const parsed = parseSignRequest(cmd.body, { maxFee, allowChainId: !cmd.legacy, allowSlippageBps: !cmd.legacy });
    checkHalts(deps.halts, m, parsed, cmd.integrator.record.id);
    const ctx: SignQuoteContext = {
      servedChains: deps.servedChains,
      registry: (chainId) => deps.pairs.get(chainId),
      integrator: cmd.integrator,
      signer: (chainId) => deps.signers.get(chainId),
      originRate: (chainId) => deps.originRates.get(chainId) ?? 0n,
      validitySeconds: (chainId) => deps.quoteValiditySeconds.get(chainId),
      nowMs: now(),
      legacy: cmd.legacy,
    };
    checkSignRequest(parsed, ctx);
    const registry = deps.pairs.get(parsed.chainId);
    const pair = registry && pairOfSign(registry, parsed);
    const refused = (reason: Parameters<SignMetrics['referenceRefusal']>[1]) =>
      m.referenceRefusal(parsed.chainId, reason);
    const standing = pair && checkStanding(deps.references, parsed.chainId, pair.base.address, refused);
    let firm: FirmAmount | undefined;
    if (parsed.amountIn !== undefined && !cmd.legacy) {
      const quoted = await firmQuote(
        { chainId: parsed.chainId, tokenIn: parsed.tokenIn, tokenOut: parsed.tokenOut, amountIn: parsed.amountIn },
        cmd.deadline,
      );
      if (standing && pair) checkFirmPrice(standing, pair, parsed.amountIn, quoted.grossOut, refused);
      firm = { amountOut: netOfFee(quoted.grossOut, parsed.fee), blockNumber: quoted.blockNumber };
      // The quote waited for the node (up to FIRM_QUOTE_DEADLINE_MS): a halt made meanwhile must
      // still stop this signature (an in-memory check).
      checkHalts(deps.halts, m, parsed, cmd.integrator.record.id);
    }
    // The signature is not made when its record could not be written in time.
    if (cmd.deadline && !cmd.deadline.allows(admission.recordTime)) throw deadlineRefusal('record');
    const started = process.hrtime.bigint();
    const result = signCheckedQuote(parsed, ctx, firm);
    // A key in memory answers at once (no await, no microtask); a module's answer is awaited.
    const signed = result instanceof Promise ? await result : result;
    m.latency(parsed.chainId, Number(process.hrtime.bigint() - started) / 1e9);
    const record = signatureRecord(parsed, signed, {
      integratorId: cmd.integrator.record.id,
      keyId: cmd.keyId,
      requestId: cmd.requestId,
      clientRequestId: cmd.clientRequestId,
      nowMs: ctx.nowMs,
    });
    const quota = cmd.integrator.record.dailySignatureQuota || (deps.dailySignatureQuota ?? 0);
    try {
      await admission.recordTime.time(deps.audit.record(record, quota));
    } catch (err) {
      if (err instanceof QuotaExceededError) {
        m.quotaRefusal(signed.chainId);
        const untilMidnight = Math.ceil((DAY_MS - (ctx.nowMs % DAY_MS)) / 1000);
        throw new ApiError(
          'QUOTA_EXCEEDED',
          `this API key's daily quota of ${quota} signatures on chain ${signed.chainId} is used up; it renews at 00:00 UTC`,
          { 'Retry-After': String(untilMidnight) },
        );
      }
      m.auditFailure(signed.chainId);
      cmd.log()?.error('audit write failed; signature withheld', {
        chainId: signed.chainId,
        error: err instanceof Error ? err.message : String(err),
      });
      throw new ApiError(
        'SERVICE_UNAVAILABLE',
        'the signature could not be recorded; retry shortly',
        {},
        { cause: err },
      );
    }
    // Written, but too late to be answered: withheld (never given out, its record simply exists).
    if (cmd.deadline?.passed()) throw deadlineRefusal('late');
    m.signed(signed.chainId, cmd.legacy, cmd.integrator.record.id);
    // Field names avoid "token": the logger redacts any field whose name contains it.
    if (deps.logSigned)
      cmd.log()?.debug('quote signed', {
        chainId: signed.chainId,
        assetIn: parsed.tokenIn,
        assetOut: parsed.tokenOut,
        fee: parsed.fee.toString(),
        userAddress: parsed.userAddress,
        amountIn: parsed.amountIn?.toString(),
        amountOut: firm?.amountOut.toString(),
        blockNumber: firm?.blockNumber,
        originRate: signed.originRate.toString(),
        timestamp: signed.response.timestamp,
        digest: signed.digest,
        signer: signed.signerAddress,
      });
    return JSON.stringify(signed.response);
  };
}

/**
 * The firm quote of a sign, within its deadline: past the bound on the chain's firm quotes in
 * flight, or with less left than the record needs after it, refused at once; else asked with the
 * deadline less what the record takes lately (`deadlineAt`), so that the record still fits. A
 * quote that failed for want of time once that is past is a deadline refusal too.
 */
function firmQuoteWithin(
  firmQuotes: FirmQuotes,
  admission: SignUseCaseAdmission,
): (req: FirmQuoteRequest, deadline: Deadline | undefined) => Promise<FirmQuote> {
  return async (req, deadline) => {
    const slots = admission.firmQuotes(req.chainId);
    if (!slots.tryAcquire()) throw overloadRefusal('chain_node');
    try {
      if (!deadline) return await firmQuotes(req);
      const deadlineAt = deadline.at - Math.min(admission.recordTime.ms, deadline.budgetMs / 4);
      if (deadlineAt <= Date.now()) throw deadlineRefusal('firm_quote');
      try {
        return await firmQuotes(withDeadline(req, deadlineAt));
      } catch (err) {
        if (err instanceof ApiError && err.code === 'SERVICE_UNAVAILABLE' && Date.now() >= deadlineAt)
          throw deadlineRefusal('firm_quote');
        throw err;
      }
    } finally {
      slots.release();
    }
  };
}

/** The request with its `deadlineAt` (absolute ms, this process's clock). */
function withDeadline(req: FirmQuoteRequest, deadlineAt: number): FirmQuoteRequest {
  return { ...req, deadlineAt };
}

/** Throws 503 HALTED when a halt covers the request, 503 SERVICE_UNAVAILABLE when the halts are unreadable. */
function checkHalts(
  halts: SignUseCaseDeps['halts'],
  m: SignMetrics,
  req: { chainId: number; tokenIn: string; tokenOut: string; userAddress: string },
  integratorId: string,
): void {
  let active;
  try {
    active = halts.current();
  } catch (err) {
    m.haltRefusal(req.chainId, 'unreadable');
    throw new ApiError('SERVICE_UNAVAILABLE', 'signing is paused for a moment; retry shortly', {}, { cause: err });
  }
  // Usually none; a handful at most: a scan is the cheapest check.
  for (const halt of active) {
    if (scopeCoversSign(halt.scope, { ...req, integratorId })) {
      const kind = haltScopeKind(halt.scope);
      m.haltRefusal(req.chainId, kind);
      throw haltedError(kind);
    }
  }
}
