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
  /**
   * Only with `amountIn`, not with `minAmountOut` (/v2 only): the calldata's minimum is the
   * answer's `amountOut` less this many basis points (0–10,000), rounded down.
   */
  slippageBps?: number;
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
  /**
   * With `amountIn` (/v2): the tokenOut amount in wei, net of the fee, that the router's `swap`
   * pays for `amountIn` in the state of block `blockNumber` (exact, from the router's `quote()`).
   */
  amountOut?: string;
  /** With `amountIn` (/v2): the minimum the calldata encodes (wei). */
  minAmountOut?: string;
  /** With `amountIn` (/v2): the block whose state `amountOut` is exact for; never older than `/v2/price`'s. */
  blockNumber?: number;
}

/** The body of a legacy `/v1` 200: the earlier interface's fields, without `deadline`. */
export type LegacySignSwapResponse = Omit<SignSwapResponse, 'deadline' | 'amountOut' | 'minAmountOut' | 'blockNumber'>;
