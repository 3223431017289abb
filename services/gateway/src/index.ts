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
} from './store/api-key-store';
export { ApiKeyCache, type ApiKeyCacheOptions } from './store/api-key-cache';
export { BookCache, v1BodyFromV2, type BookEntry } from './store/book-cache';
export { RateLimiter, batchFor, EXACT_UP_TO, type RateDecision, type RateLimiterOptions } from './store/rate-limiter';
export { seedDevKey, DEV_INTEGRATOR_ID } from './store/dev-key';
export { OPENAPI_PATH, loadOpenApiDocument } from './http/openapi-route';
export { V1_EMPTY_BOOK } from './http/price-routes';
