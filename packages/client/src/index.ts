/** @pmm/client: the integrator SDK. */
export { API_ERROR_CODES } from './api-types';
export type {
  ApiErrorCode,
  Orderbook,
  OrderbookLevel,
  PairOrderbook,
  SignSwapRequest,
  SignSwapResponse,
} from './api-types';
export { PmmApiError } from './pmm-api-error';
export { PmmClient } from './pmm-client';
export type { PmmClientOptions } from './pmm-client';
export { subscribeOrderbook } from './subscribe-orderbook';
export type { OrderbookSubscription, SubscribeOrderbookOptions } from './subscribe-orderbook';
export { SseParser } from './sse-parser';
export type { ServerSentEvent } from './sse-parser';
export { AMM_VERIFICATION_TYPES, ammVerificationDomain, signQuoteAuthorization } from './amm-verification';
export type { AmmVerificationParams } from './amm-verification';
export { executeSwap, SWAPPED_EVENT } from './execute-swap';
export type { ExecuteSwapParams, ExecuteSwapResult } from './execute-swap';
export { estimateFromBook } from './estimate-from-book';
export type { BookEstimate, BookEstimateParams } from './estimate-from-book';
