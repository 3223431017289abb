/**
 * Everything the signer's app depends on, passed explicitly to `createApp` (no globals, no
 * `process.env`): main wires the real ones, tests real Redis-backed stores or fakes.
 */
import type { KeySigner, PairRegistry } from '@pmm/protocol';
import type { HaltRecord, Logger, Metrics, OperatorGuardOptions, ReadinessCheck } from '@pmm/core';
import type { FirmQuotes } from './chain/firm-quotes';
import type { AuditSink } from './store/audit-trail';
import type { StandingSource } from './domain/reference-check';
import type { IntegratorSource } from './store/integrator-store';

export interface SignerDeps {
  logger: Logger;
  /** A per-app registry (see createMetrics); the app declares its metrics on it. */
  metrics: Metrics;
  /** Shared secret expected in `X-Internal-Token`. */
  internalToken: string;
  servedChains: readonly number[];
  /** Largest accepted `fee` (units of 0.1 bps). */
  maxFee: bigint;
  /** The signing key of every served chain (in memory, or in a PKCS#11 module). */
  signers: ReadonlyMap<number, KeySigner>;
  /** Configured originRate per chain; a missing chain means 0. */
  originRates: ReadonlyMap<number, bigint>;
  /** The router's validity per served chain, in seconds: an answer's deadline is its timestamp + this. */
  quoteValiditySeconds: ReadonlyMap<number, number>;
  /** Cached pair registries (PairRegistryCache). */
  pairs: { get(chainId: number): PairRegistry | undefined };
  integrators: IntegratorSource;
  /**
   * The active halts (core's HaltView): `current()` throws when they could not be read recently
   * enough, and then nothing is signed.
   */
  halts: { current(): readonly HaltRecord[] };
  /** The audit trail: every signature is recorded here before it is returned. */
  audit: AuditSink;
  /**
   * Each pair's standing against its reference, as the indexer publishes it
   * (store/reference-standings.ts): `standing()` throws when a pair with a reference has none fresh.
   */
  references: StandingSource;
  /** The exact amountOut of a /v2 sign with amountIn (chain/firm-quotes.ts). */
  firmQuotes: FirmQuotes;
  /** Signatures per integrator, chain and UTC day when its record sets none (0: no quota). */
  dailySignatureQuota?: number;
  /** Who may read /healthz, /readyz and /metrics (Host names, optional token); default: IP addresses and localhost. */
  operatorAccess?: OperatorGuardOptions;
  /** `/readyz` checks; each must resolve within 1 s. */
  readiness: Record<string, ReadinessCheck>;
  /** Body size limit; default 16 KiB. */
  bodyLimitBytes?: number;
  /** Signs worked on at once; past it, 503 at once (MAX_SIGNS_IN_FLIGHT; default app.ts's). */
  maxSignsInFlight?: number;
  /** The longest deadline a sign has here (MAX_SIGN_DEADLINE_MS; default sign-admission.ts's). */
  maxSignDeadlineMs?: number;
  /** Clock (Unix ms); default Date.now. Tests pin it. */
  now?: () => number;
}
