/**
 * @pmm/signer: the internal signing service. Production starts it with `dist/main.js`; these
 * exports serve tests, benchmarks and the gateway's end-to-end tests.
 */
export { createApp } from './app';
export type { SignerDeps } from './app';
export { createSignUseCase } from './domain/sign-use-case';
export { NO_REFERENCES, type StandingSource } from './domain/reference-check';
export { ReferenceStandings, STANDING_MAX_AGE_MS, StandingUnknown } from './store/reference-standings';
export type { SignCommand, SignUseCase, SignUseCaseDeps } from './domain/sign-use-case';
export { signMetrics } from './domain/sign-metrics';
export {
  DEFAULT_MAX_SIGNS_IN_FLIGHT,
  SIGNER_DEADLINE_REASONS,
  SIGNER_OVERLOAD_REASONS,
  signerAdmission,
  type SignerAdmission,
} from './domain/sign-admission';
export { SIGNER_SETTINGS, chainSettings, loadSignerConfig, missingKeyMessage } from './config';
export type { ChainSignerConfig, KeySource, SignerConfig } from './config';
export { loadSigningKeys } from './load-signing-keys';
export type { ChainSigners } from './load-signing-keys';
export { checkQuoteValidity } from './check-quote-validity';
export { startSigner } from './start-signer';
export type { RunningSigner } from './start-signer';
export { PairRegistryCache } from './store/pair-registry-cache';
export type { PairRegistryCacheOptions } from './store/pair-registry-cache';
export { IntegratorStore, integratorView } from './store/integrator-store';
export type { IntegratorStoreOptions } from './store/integrator-store';
export type { IntegratorSource, IntegratorView } from './store/integrator-store';
export { checkSignRequest, signQuote } from './domain/sign-quote';
export type { SignQuoteContext, SignQuoteResponse, SignedQuote } from './domain/sign-quote';
export { MAX_BATCH_RECORDS, MAX_INDEXED_IDS, QuotaExceededError, RedisAuditTrail } from './store/audit-trail';
export { auditTrailSizeMetric } from './store/audit-trail-size';
export type { AuditSink, RedisAuditTrailOptions } from './store/audit-trail';
export { parseJsonBody } from './http/json-body';
export { createFirmQuotes } from './chain/firm-quotes';
export type { FirmQuote, FirmQuoteChain, FirmQuoteOutcome, FirmQuotes, FirmQuotesOptions } from './chain/firm-quotes';
export { bookHeadReader, parseBookHead } from './store/book-head';
export type { BookHead } from './store/book-head';
