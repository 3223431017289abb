/**
 * What keeps the signer from working on signs that can only be answered late
 * (docs/decisions/0071-past-capacity-a-fast-no.md):
 * - the bound on signs in flight (MAX_SIGNS_IN_FLIGHT, from the request read to the answer):
 *   past it, refused at once;
 * - per chain, the bound on signs waiting for that chain's firm quotes (half the signs in
 *   flight): a slow or stalled node cannot take every sign, the other chains' included;
 * - the sign's deadline: what the gateway sent as left of it (SIGN_BUDGET_HEADER), never more
 *   than this signer's MAX_SIGN_DEADLINE_MS, and that when none was sent, counted from the
 *   request's arrival here: a sign that arrives with less than a sign takes here is refused
 *   before it is read; the use case checks it before the firm quote and before the signature
 *   and its durable record (domain/sign-use-case.ts).
 * Every refusal is 503 SERVICE_UNAVAILABLE with Retry-After, counted by its reason.
 */
import { parseSignBudget } from '@pmm/protocol';
import { InFlightLimit, refusalMetrics, StepTime, type Logger, type Metrics, type RefusalError } from '@pmm/core';

export const SIGNER_OVERLOAD_REASONS = ['in_flight', 'chain_node'] as const;
/**
 * queue: arrived with less left than a sign takes here; firm_quote, record: not started, too
 * little left; late: the record was written after the deadline (the answer is refused, the
 * record exists).
 */
export const SIGNER_DEADLINE_REASONS = ['queue', 'firm_quote', 'record', 'late'] as const;

export interface SignerAdmission {
  /** Signs in flight. */
  readonly signs: InFlightLimit;
  /** Signs waiting for a chain's firm quotes. */
  firmQuotes(chainId: number): InFlightLimit;
  /** How long a sign has been taking here, from its arrival to its answer. */
  readonly signTime: StepTime;
  /** How long an audit record's durable write has been taking. */
  readonly recordTime: StepTime;
  /**
   * The budget of a sign, ms, from its SIGN_BUDGET_HEADER value: what the gateway sent, cut to
   * MAX_SIGN_DEADLINE_MS; that when none (or no whole ms) was sent. Nothing a request carries can
   * make it longer.
   */
  budgetOf(header: unknown): number;
  /** Counts a refusal (metrics, and the warning that sums them up). */
  refused(err: RefusalError): void;
}

/** MAX_SIGNS_IN_FLIGHT's default: two gateways' SIGNER_MAX_IN_FLIGHT. */
export const DEFAULT_MAX_SIGNS_IN_FLIGHT = 128;

/**
 * MAX_SIGN_DEADLINE_MS's default: 750 ms, the longest any aggregator here waits (Bebop's
 * timeout); the gateway's own deadline (SIGN_DEADLINE_MS, 400) is under it.
 */
export const DEFAULT_MAX_SIGN_DEADLINE_MS = 750;

/** Estimates before the first observations, ms. */
const SIGN_TIME_INITIAL_MS = 5;
const RECORD_TIME_INITIAL_MS = 2;

export interface SignerAdmissionOptions {
  maxInFlight: number;
  maxDeadlineMs: number;
  metrics: Metrics;
  logger?: Logger;
}

export function signerAdmission(opts: SignerAdmissionOptions): SignerAdmission {
  const signs = new InFlightLimit(opts.maxInFlight);
  const perChain = Math.max(1, Math.ceil(opts.maxInFlight / 2));
  const firmQuotes = new Map<number, InFlightLimit>();
  const counted = refusalMetrics(opts.metrics, {
    service: 'signer',
    reasons: { overload: SIGNER_OVERLOAD_REASONS, deadline: SIGNER_DEADLINE_REASONS },
    limit: signs,
    logger: opts.logger,
  });
  return {
    signs,
    firmQuotes: (chainId) => {
      let limit = firmQuotes.get(chainId);
      if (!limit) firmQuotes.set(chainId, (limit = new InFlightLimit(perChain)));
      return limit;
    },
    signTime: new StepTime(SIGN_TIME_INITIAL_MS),
    recordTime: new StepTime(RECORD_TIME_INITIAL_MS),
    budgetOf: (header) => Math.min(parseSignBudget(header) ?? opts.maxDeadlineMs, opts.maxDeadlineMs),
    refused: (err) => counted.refused(err),
  };
}
