/** @pmm/client: the integrator SDK. */
// The wire types are the protocol's (the services use the same definitions), under the SDK's names.
export { ERROR_CODES as API_ERROR_CODES } from '@pmm/protocol';
export type {
  ErrorCode as ApiErrorCode,
  FillFate,
  FillFateKind,
  FillsResponse,
  OrderbookResponse as Orderbook,
  OrderbookLevel,
  PairOrderbook,
  SignSwapRequest,
  SignSwapResponse,
  AmmVerificationParams,
} from '@pmm/protocol';
export { PmmApiError } from './pmm-api-error';
export { assertQuoteLive } from './quote-deadline';
export type { ClientErrorCode } from './pmm-api-error';
export { PmmClient } from './pmm-client';
export type { FillsQuery, PmmClientOptions } from './pmm-client';
export type { CallOptions, RetryOptions } from './http-request';
export type { RateLimitInfo } from './rate-limit-info';
export type {
  SwapWallet,
  TypedDataToSign,
  TypedDataWallet,
  ViemLocalAccount,
  ViemSwapClient,
  ViemWalletClient,
} from './wallet';
export { subscribeOrderbook } from './subscribe-orderbook';
export type { OrderbookSubscription, SubscribeOrderbookOptions } from './subscribe-orderbook';
export { SseParser } from './sse-parser';
export type { ServerSentEvent } from './sse-parser';
export { AMM_VERIFICATION_TYPES, ammVerificationDomain, signQuoteAuthorization } from './amm-verification';
export { DEFAULT_SLIPPAGE_BPS, executeSwap, SWAPPED_EVENT } from './execute-swap';
export type { ExecuteSwapParams, ExecuteSwapResult } from './execute-swap';
export { estimateFromBook } from './estimate-from-book';
export type { BookEstimate, BookEstimateParams } from './estimate-from-book';
