/**
 * The sign use case's metrics: latency of the check-and-sign step, signatures issued, and
 * signatures withheld because their audit record could not be written, signs refused by a halt
 * or against a pair's reference.
 */
import type { HaltScopeKind, Metrics } from '@pmm/core';
import type { ReferenceRefusal } from './reference-check';

export interface SignMetrics {
  latency(chainId: number, seconds: number): void;
  signed(chainId: number, legacy: boolean, integratorId: string): void;
  auditFailure(chainId: number): void;
  quotaRefusal(chainId: number): void;
  /** A sign refused by a halt (its scope's kind), or because the halts were unreadable. */
  haltRefusal(chainId: number, scope: HaltScopeKind | 'unreadable'): void;
  referenceRefusal(chainId: number, reason: ReferenceRefusal): void;
}

/** `chains`: the served chains, whose failure counters start at 0 (see below). */
export function signMetrics(metrics: Metrics, chains: readonly number[] = []): SignMetrics {
  const latency = metrics.histogram(
    'signer_sign_duration_seconds',
    'Time to check, sign and encode one quote (after body parsing)',
    ['chain'] as const,
  );
  // By integrator too: integrators are a set the operator creates (tens, not per user), so the
  // series stay few, and the dashboard can show who signs how much.
  const signed = metrics.counter('signer_signatures_total', 'Quotes signed, by chain, route version and integrator', [
    'chain',
    'version',
    'integrator',
  ] as const);
  const auditFailures = metrics.counter(
    'signer_audit_failures_total',
    'Signatures withheld (503) because their audit record could not be written',
    ['chain'] as const,
  );
  const quotaRefusals = metrics.counter(
    'signer_quota_refusals_total',
    'Signatures refused (429 QUOTA_EXCEEDED) because the integrator used up its daily quota on the chain',
    ['chain'] as const,
  );
  const haltRefusals = metrics.counter(
    'signer_halt_refusals_total',
    'Signs refused by an operator halt (503 HALTED, by the kind of the scope) or while the halts were unreadable (scope="unreadable")',
    ['chain', 'scope'] as const,
  );
  const referenceRefusals = metrics.counter(
    'signer_reference_refusals_total',
    "Signs refused against a pair's reference: withheld by the indexer (503 PAIR_UNAVAILABLE), a firm quote's price past the " +
      'band (firm_price, 503 PAIR_UNAVAILABLE), or no fresh standing (unknown, 503 SERVICE_UNAVAILABLE)',
    ['chain', 'reason'] as const,
  );
  // Present from the start at 0: a counter that appears at 1 shows no increase() to Prometheus,
  // so the alert on the first withheld signature would never fire.
  for (const chain of chains) {
    auditFailures.inc({ chain: String(chain) }, 0);
    quotaRefusals.inc({ chain: String(chain) }, 0);
  }
  // Label-bound children, cached: prom-client hashes a labels object on every call otherwise.
  const latencyOf = new Map<number, { observe(v: number): void }>();
  const signedOf = new Map<string, { inc(): void }>();
  return {
    latency(chainId, seconds) {
      let h = latencyOf.get(chainId);
      if (!h) latencyOf.set(chainId, (h = latency.labels(String(chainId))));
      h.observe(seconds);
    },
    signed(chainId, legacy, integratorId) {
      const version = legacy ? 'v1' : 'v2';
      const key = `${chainId} ${version} ${integratorId}`;
      let c = signedOf.get(key);
      if (!c) signedOf.set(key, (c = signed.labels(String(chainId), version, integratorId)));
      c.inc();
    },
    referenceRefusal(chainId, reason) {
      referenceRefusals.inc({ chain: String(chainId), reason });
    },
    haltRefusal(chainId, scope) {
      haltRefusals.inc({ chain: String(chainId), scope });
    },
    auditFailure(chainId) {
      auditFailures.inc({ chain: String(chainId) });
    },
    quotaRefusal(chainId) {
      quotaRefusals.inc({ chain: String(chainId) });
    },
  };
}
