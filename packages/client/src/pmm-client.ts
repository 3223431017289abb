/**
 * HTTP client of the public API. Uses the global fetch (Node >= 20, browsers). Every non-2xx
 * answer becomes a PmmApiError carrying the spec's code and the request id; 429 and 503 are
 * retried as http-request.ts describes.
 */
import type { FillsResponse, OrderbookResponse as Orderbook, SignSwapRequest, SignSwapResponse } from '@pmm/protocol';
import { requestJson, type CallOptions, type RetryOptions } from './http-request';
import { assertQuoteLive } from './quote-deadline';
import type { RateLimitInfo } from './rate-limit-info';
import { subscribeOrderbook, type OrderbookSubscription, type SubscribeOrderbookOptions } from './subscribe-orderbook';

export interface PmmClientOptions {
  /** Base URL of the gateway, e.g. http://127.0.0.1:8080 */
  baseUrl: string;
  apiKey: string;
  /** Default deadline of a call, retries included, ms (default 10 000: the service's own limit). */
  timeoutMs?: number;
  /** Default retry policy of 429 and 503 (default 3 attempts). */
  retry?: RetryOptions;
}

/** The query of {@link PmmClient.getFills}: a period by signing time (at most a day), and the page. */
export interface FillsQuery {
  chainId?: number;
  /** Inclusive; Unix seconds or a Date (whole seconds: the milliseconds are dropped). */
  from: number | Date;
  /** Exclusive, at most a day after `from`. */
  to: number | Date;
  /** The `next` of the page before. */
  cursor?: string;
}

const unixSeconds = (t: number | Date) => (t instanceof Date ? Math.floor(t.getTime() / 1000) : t);

const DEFAULT_RETRY: Required<RetryOptions> = { attempts: 3, minDelayMs: 200, maxDelayMs: 5_000 };

export class PmmClient {
  private readonly baseUrl: string;
  private rateLimit: RateLimitInfo | undefined;

  constructor(private readonly opts: PmmClientOptions) {
    this.baseUrl = opts.baseUrl.replace(/\/+$/, '');
  }

  /**
   * The `RateLimit-*` figures of the latest answer that carried them (any call of this
   * client, failed ones included), or undefined before the first.
   */
  get lastRateLimit(): RateLimitInfo | undefined {
    return this.rateLimit;
  }

  /** The chain's live orderbook (`GET /v2/price`). Throws SERVICE_UNAVAILABLE while it has none (after retries). */
  getOrderbook(chainId?: number, options: CallOptions = {}): Promise<Orderbook> {
    const query = chainId === undefined ? '' : `?chainId=${chainId}`;
    return this.request<Orderbook>('GET', `/v2/price${query}`, undefined, options);
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

  /**
   * A signed swap quote (`POST /v2/swap/sign`); amounts and fee are sent as decimal strings. With
   * `amountIn`, the answer's `amountOut` is the exact amount the router pays at `blockNumber` and
   * `minAmountOut` the minimum its calldata encodes (`slippageBps` sets it from `amountOut`).
   * Never resolves with a quote past its `deadline` (PmmApiError QUOTE_EXPIRED instead).
   */
  async signSwap(req: SignSwapRequest, options: CallOptions = {}): Promise<SignSwapResponse> {
    const body: Record<string, unknown> = {
      tokenIn: req.tokenIn,
      tokenOut: req.tokenOut,
      fee: String(req.fee),
      userAddress: req.userAddress,
    };
    if (req.chainId !== undefined) body.chainId = req.chainId;
    if (req.amountIn !== undefined) body.amountIn = String(req.amountIn);
    if (req.minAmountOut !== undefined) body.minAmountOut = String(req.minAmountOut);
    if (req.slippageBps !== undefined) body.slippageBps = req.slippageBps;
    const quote = await this.request<SignSwapResponse>('POST', '/v2/swap/sign', body, options);
    assertQuoteLive(quote);
    return quote;
  }

  /**
   * One page of your signatures of a period on a chain and the fate of each: executed, reverted
   * (with the router's error), unused, or pending (`GET /v2/fills`). While the answer's `next` is
   * not null, call again with `cursor: next` and the same period:
   *
   * ```ts
   * for (let cursor: string | undefined; ; ) {
   *   const page = await client.getFills({ chainId: 8453, from, to, cursor });
   *   for (const fate of page.fates) console.log(fate.clientRequestId, fate.fate, fate.reason);
   *   if (page.next === null) break;
   *   cursor = page.next;
   * }
   * ```
   */
  getFills(query: FillsQuery, options: CallOptions = {}): Promise<FillsResponse> {
    const params = new URLSearchParams();
    if (query.chainId !== undefined) params.set('chainId', String(query.chainId));
    params.set('from', String(unixSeconds(query.from)));
    params.set('to', String(unixSeconds(query.to)));
    if (query.cursor !== undefined) params.set('cursor', query.cursor);
    return this.request<FillsResponse>('GET', `/v2/fills?${params.toString()}`, undefined, options);
  }

  private request<T>(method: string, path: string, body: unknown, options: CallOptions): Promise<T> {
    const headers: Record<string, string> = { 'X-API-KEY': this.opts.apiKey };
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    return requestJson<T>(
      { url: `${this.baseUrl}${path}`, method, headers, body: body === undefined ? undefined : JSON.stringify(body) },
      {
        timeoutMs: options.timeoutMs ?? this.opts.timeoutMs ?? 10_000,
        signal: options.signal,
        retry: { ...DEFAULT_RETRY, ...this.opts.retry, ...options.retry },
      },
      (info) => (this.rateLimit = info),
    );
  }
}
