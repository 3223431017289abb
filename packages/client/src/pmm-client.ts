/**
 * HTTP client of the public API. Uses the global fetch (Node >= 18). Every non-2xx answer
 * becomes a PmmApiError carrying the spec's code and the request id.
 */
import { Orderbook, SignSwapRequest, SignSwapResponse } from './api-types';
import { PmmApiError, apiErrorFromResponse } from './pmm-api-error';
import { subscribeOrderbook, type OrderbookSubscription, type SubscribeOrderbookOptions } from './subscribe-orderbook';

export interface PmmClientOptions {
  /** Base URL of the gateway, e.g. http://127.0.0.1:8080 */
  baseUrl: string;
  apiKey: string;
  /** Per-request timeout; default 10 s (the service's own limit). */
  timeoutMs?: number;
}

export class PmmClient {
  private readonly baseUrl: string;
  constructor(private readonly opts: PmmClientOptions) {
    this.baseUrl = opts.baseUrl.replace(/\/+$/, '');
  }

  /** The chain's live orderbook (`GET /v2/price`). Throws SERVICE_UNAVAILABLE while it has none. */
  getOrderbook(chainId?: number): Promise<Orderbook> {
    const query = chainId === undefined ? '' : `?chainId=${chainId}`;
    return this.request<Orderbook>('GET', `/v2/price${query}`);
  }

  /**
   * Follows the chain's books over `GET /v2/price/stream`: `onBook` gets each new book (the
   * current one first), in block order; reconnects by itself with `Last-Event-ID` (see
   * subscribe-orderbook.ts). Call `close()` on the result to stop.
   */
  subscribeOrderbook(
    chainId: number | undefined,
    onBook: (book: Orderbook) => void,
    options: SubscribeOrderbookOptions = {},
  ): OrderbookSubscription {
    return subscribeOrderbook({ baseUrl: this.baseUrl, apiKey: this.opts.apiKey }, chainId, onBook, options);
  }

  /** A signed swap quote (`POST /v2/swap/sign`); amounts and fee are sent as decimal strings. */
  signSwap(req: SignSwapRequest): Promise<SignSwapResponse> {
    const body: Record<string, unknown> = {
      tokenIn: req.tokenIn,
      tokenOut: req.tokenOut,
      fee: String(req.fee),
      userAddress: req.userAddress,
    };
    if (req.chainId !== undefined) body.chainId = req.chainId;
    if (req.amountIn !== undefined) body.amountIn = String(req.amountIn);
    if (req.minAmountOut !== undefined) body.minAmountOut = String(req.minAmountOut);
    return this.request<SignSwapResponse>('POST', '/v2/swap/sign', body);
  }

  private async request<T>(method: string, path: string, body?: unknown): Promise<T> {
    let res: Response;
    try {
      res = await fetch(`${this.baseUrl}${path}`, {
        method,
        headers: { 'X-API-KEY': this.opts.apiKey, ...(body ? { 'Content-Type': 'application/json' } : {}) },
        body: body ? JSON.stringify(body) : undefined,
        signal: AbortSignal.timeout(this.opts.timeoutMs ?? 10_000),
      });
    } catch (err) {
      throw new PmmApiError(0, 'NETWORK_ERROR', err instanceof Error ? err.message : String(err));
    }
    const text = await res.text();
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      throw new PmmApiError(res.status, 'BAD_RESPONSE', `non-JSON answer (HTTP ${res.status})`);
    }
    if (res.ok) return json as T;
    throw apiErrorFromResponse(res, json);
  }
}
