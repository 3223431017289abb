/**
 * The two refusals of a sign that could only have been answered late
 * (docs/decisions/0071-past-capacity-a-fast-no.md), each 503 SERVICE_UNAVAILABLE with
 * `Retry-After` (the error type adds it):
 * - overload: a bound on the work in flight was reached; refused at once, before any work;
 * - deadline: what is left of the sign's deadline is less than the next step takes (or it
 *   has passed); refused instead of starting that step.
 *
 * Each is counted by its reason (`<service>_overload_refusals_total`,
 * `<service>_deadline_refusals_total`), beside the bound and the work in flight
 * (`<service>_sign_in_flight_limit`, `<service>_sign_in_flight`). They are not logged one by
 * one (a burst would flood the log with them): one warning at most every 10 s sums them up.
 */
import { ApiError } from '@pmm/protocol';
import type { Logger } from '../service/logger';
import type { Metrics } from '../service/metrics';
import type { InFlightLimit } from './in-flight-limit';

export type RefusalKind = 'overload' | 'deadline';

/** A refusal for overload or a missed deadline: 503 SERVICE_UNAVAILABLE with Retry-After. */
export class RefusalError extends ApiError {
  constructor(
    readonly kind: RefusalKind,
    /** Which bound, or which step could no longer be done in time (the metric's label). */
    readonly reason: string,
    message: string,
  ) {
    super('SERVICE_UNAVAILABLE', message);
  }
}

const MESSAGES: Record<RefusalKind, string> = {
  overload: 'over capacity right now; retry shortly',
  deadline: 'this sign could not be answered within its deadline; retry shortly',
};

/**
 * One error per kind and reason, made once: a refusal must cost less than the work it spares,
 * and capturing an Error's stack trace on every one is work for nothing. The instance carries
 * nothing of the request (the envelope takes the request id from the response), so every
 * refusal of that reason can share it.
 */
const made = new Map<string, RefusalError>();
function refusal(kind: RefusalKind, reason: string): RefusalError {
  const name = `${kind}:${reason}`;
  let err = made.get(name);
  if (!err) made.set(name, (err = new RefusalError(kind, reason, MESSAGES[kind])));
  return err;
}

/** Every bound is taken: refused at once. */
export function overloadRefusal(reason: string): RefusalError {
  return refusal('overload', reason);
}

/** The deadline cannot be met: refused instead of starting `reason`, the next step (or answered late). */
export function deadlineRefusal(reason: string): RefusalError {
  return refusal('deadline', reason);
}

export interface RefusalMetrics {
  /** Counts a refusal (and sums it up in the next warning). */
  refused(err: RefusalError): void;
}

export interface RefusalMetricsOptions {
  /** The metric names' prefix: `gateway`, `signer`. */
  service: string;
  /** Every reason of each kind: their series are present from the start at 0 (an alert's increase() sees the first). */
  reasons: { overload: readonly string[]; deadline: readonly string[] };
  /** The bound whose size and load are exposed. */
  limit: InFlightLimit;
  logger?: Logger;
  /** Shortest time between two warnings, ms; default 10 s. */
  logEveryMs?: number;
}

export function refusalMetrics(metrics: Metrics, opts: RefusalMetricsOptions): RefusalMetrics {
  const { service, limit } = opts;
  const counters = {
    overload: metrics.counter(
      `${service}_overload_refusals_total`,
      'Signs refused at once (503) because a bound on the work in flight was reached, by which bound',
      ['reason'] as const,
    ),
    deadline: metrics.counter(
      `${service}_deadline_refusals_total`,
      'Signs refused (503) because their deadline could not be met, by the step not started (or answered late)',
      ['reason'] as const,
    ),
  };
  // Label-bound children, cached: prom-client hashes a labels object on every call otherwise.
  const children = new Map<string, { inc(): void }>();
  const child = (kind: RefusalKind, reason: string) => {
    const name = `${kind}:${reason}`;
    let c = children.get(name);
    if (!c) children.set(name, (c = counters[kind].labels(reason)));
    return c;
  };
  for (const kind of ['overload', 'deadline'] as const)
    for (const reason of opts.reasons[kind]) counters[kind].inc({ reason }, 0);
  metrics
    .gauge(`${service}_sign_in_flight_limit`, 'The bound on signs in flight (past it: 503 at once)', [] as const)
    .set(limit.limit);
  metrics.gauge(`${service}_sign_in_flight`, 'Signs in flight at the scrape', [] as const, async (gauge) => {
    gauge.set(limit.inFlight);
  });
  const logEveryMs = opts.logEveryMs ?? 10_000;
  let unlogged: Record<string, number> = {};
  let lastLog = 0;
  return {
    refused(err) {
      child(err.kind, err.reason).inc();
      if (!opts.logger) return;
      const name = `${err.kind}:${err.reason}`;
      unlogged[name] = (unlogged[name] ?? 0) + 1;
      const now = Date.now();
      if (now - lastLog < logEveryMs) return;
      opts.logger.warn('signs refused for overload or a deadline that could not be met', {
        refused: unlogged,
        inFlight: limit.inFlight,
        limit: limit.limit,
      });
      unlogged = {};
      lastLog = now;
    },
  };
}
