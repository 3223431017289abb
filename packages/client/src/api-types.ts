/**
 * The wire types of the public API (spec sections 2 and 7). The SDK depends on ethers only, so
 * these are declared here; test/api-types.test.ts pins them against the server's definitions.
 */

export const API_ERROR_CODES = [
  'NOT_FOUND',
  'METHOD_NOT_ALLOWED',
  'UNAUTHORIZED',
  'RATE_LIMITED',
  'PAYLOAD_TOO_LARGE',
  'MALFORMED_REQUEST',
  'REQUEST_TIMEOUT',
  'EXPECTATION_FAILED',
  'HEADERS_TOO_LARGE',
  'INVALID_JSON',
  'UNSUPPORTED_FIELD',
  'VALIDATION_ERROR',
  'UNSUPPORTED_CHAIN',
  'SERVICE_UNAVAILABLE',
  'PAIR_NOT_FOUND',
  'ADDRESS_NOT_WHITELISTED',
  'SIGNING_FAILED',
  'ENCODING_FAILED',
  'INTERNAL_ERROR',
] as const;

export type ApiErrorCode = (typeof API_ERROR_CODES)[number];

export interface OrderbookLevel {
  price: string;
  amount: string;
}

export interface PairOrderbook {
  baseToken: string;
  quoteToken: string;
  bids: OrderbookLevel[];
  asks: OrderbookLevel[];
}

export interface Orderbook {
  chainId: number;
  blockNumber: number;
  blockTime: number;
  pairs: PairOrderbook[];
}

export interface SignSwapRequest {
  chainId?: number;
  tokenIn: string;
  tokenOut: string;
  /** Fee tier, resolution 0.1 bps: 10 = 1 bps. */
  fee: string | number | bigint;
  userAddress: string;
  /** Input amount in wei; when given, the response carries calldata. */
  amountIn?: string | bigint;
  minAmountOut?: string | bigint;
}

export interface SignSwapResponse {
  verificationData: string;
  timestamp: number;
  calldata?: string;
}
