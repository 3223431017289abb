/** Shapes of the `POST /v2/swap/sign` request and response bodies (spec section 2.3). */

/** What a client may send; numbers may be strings, numbers or bigints (serialised as strings). */
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

/** The body of a 200; field order is the order of the JSON output. */
export interface SignSwapResponse {
  verificationData: string;
  /** Unix seconds at signing. */
  timestamp: number;
  /**
   * Unix seconds: the last block timestamp at which the chain's router still accepts this
   * quote (`timestamp` + the router's validity); in any later block the swap reverts.
   */
  deadline: number;
  /** Present if and only if the request had `amountIn`. */
  calldata?: string;
}

/** The body of a legacy `/v1` 200: the earlier interface's fields, without `deadline`. */
export type LegacySignSwapResponse = Omit<SignSwapResponse, 'deadline'>;
