/** @pmm/gateway: the public API (keys, limits, /v2 and legacy /v1, OpenAPI). */
export { createApp, type Gateway, type GatewayDeps, type GatewayAppConfig } from './app';
export {
  GATEWAY_SETTINGS,
  loadGatewayConfig,
  describeGatewayConfig,
  gatewayTimeouts,
  type GatewayConfig,
} from './config';
export {
  ApiKeyStore,
  API_KEY_PREFIX,
  generateApiKey,
  hashApiKey,
  parseApiKeyRecord,
  readIntegratorRecord,
  type ApiKeyListing,
  type IntegratorUpdate,
  type ResolvedApiKey,
} from './keys/api-key-store';
export { ApiKeyCache, type ApiKeyCacheOptions } from './keys/api-key-cache';
export { BookCache, v1BodyFromV2, type BookEntry } from './price/book-cache';
export {
  AHEAD_FROM,
  RateLimiter,
  batchFor,
  EXACT_UP_TO,
  type RateDecision,
  type RateLimiterOptions,
} from './keys/rate-limiter';
export { seedDevKey, DEV_INTEGRATOR_ID } from './keys/dev-key';
export { OPENAPI_PATH, loadOpenApiDocument } from './docs/openapi-route';
export { V1_EMPTY_BOOK } from './price/price-route';
export { SIGNER_REQUEST_HEADER_NAMES } from './sign/signer-headers';
export { StreamSlots } from './stream/stream-slots';
