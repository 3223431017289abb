/**
 * What the signer shows of keys held in a hardware module: a log line and a count for every
 * failure (a sign the module refused or did not answer in time, a reconnect that did not
 * succeed), a gauge that is 0 while a chain's key cannot sign, a gauge that is 1 while the
 * token refuses the chain's PIN for good (no login is tried: a person must give the new PIN),
 * and a log line when it signs again. Keys in memory never fail this way, so their gauges stay
 * 1 and 0 and their counter 0.
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
  const pinRefused = metrics.gauge(
    'signer_key_pin_refused',
    "1 while the token refuses the chain's PIN for good (wrong, locked, expired): no login is tried until a new PIN file or a restart",
    ['chain'] as const,
  );
  // Present from the start (at 0 and 1): an alert on increase() needs the series before the first failure.
  for (const chain of chains) {
    failures.inc({ chain: String(chain) }, 0);
    up.set({ chain: String(chain) }, 1);
    pinRefused.set({ chain: String(chain) }, 0);
  }
  return {
    failed(chainId, reason) {
      failures.inc({ chain: String(chainId) });
      up.set({ chain: String(chainId) }, 0);
      logger.error('signing key unavailable; signs answer 503 until its module recovers', { chainId, reason });
    },
    pinRefused(chainId, reason) {
      pinRefused.set({ chain: String(chainId) }, 1);
      logger.error(
        "the token refused the signing key's PIN: no further login is tried (the token would lock); write the new PIN to the PIN file, or restart",
        { chainId, reason },
      );
    },
    recovered(chainId) {
      up.set({ chain: String(chainId) }, 1);
      pinRefused.set({ chain: String(chainId) }, 0);
      logger.info('signing key available again', { chainId });
    },
  };
}
