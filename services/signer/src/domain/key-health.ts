/**
 * What the signer shows of keys held in a hardware module: a log line and a count for every
 * failure (a sign the module refused, a reconnect that did not succeed), a gauge that is 0
 * while a chain's key cannot sign, and a log line when it signs again. Keys in memory never
 * fail this way, so their gauge stays 1 and their counter 0.
 */
import type { Logger, Metrics } from '@pmm/core';
import type { KeyHealthHooks } from '../load-signing-keys';

export function keyHealth(metrics: Metrics, logger: Logger, chains: readonly number[]): KeyHealthHooks {
  const failures = metrics.counter(
    'signer_key_failures_total',
    "Failures of a chain's signing key in its PKCS#11 module (a refused sign or a failed reconnect); signs meanwhile answer 503",
    ['chain'] as const,
  );
  const up = metrics.gauge('signer_key_up', "1 when the chain's signing key can sign, 0 while its module fails", [
    'chain',
  ] as const);
  // Present from the start (at 0 and 1): an alert on increase() needs the series before the first failure.
  for (const chain of chains) {
    failures.inc({ chain: String(chain) }, 0);
    up.set({ chain: String(chain) }, 1);
  }
  return {
    failed(chainId, reason) {
      failures.inc({ chain: String(chainId) });
      up.set({ chain: String(chainId) }, 0);
      logger.error('signing key unavailable; signs answer 503 until its module recovers', { chainId, reason });
    },
    recovered(chainId) {
      up.set({ chain: String(chainId) }, 1);
      logger.info('signing key available again', { chainId });
    },
  };
}
