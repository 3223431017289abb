/**
 * `GET /v2/price/stream` for integrators: each new book of a chain, pushed, with automatic
 * reconnect. Uses the global fetch (Node >= 20, browsers) and reads the event stream itself,
 * so that it can send `X-API-KEY` (a browser EventSource cannot).
 *
 * - `onBook` gets every `book` event's orderbook, the current one first, never an older block
 *   than the last it got (the server's guarantee; reconnects send `Last-Event-ID`, so a book
 *   already received is not delivered again).
 * - `onUnavailable` gets the `unavailable` event (the chain has no live book): drop the book
 *   you hold; books resume by themselves.
 * - A stream that ends, a network error, a 429 or a 5xx: reconnect after a delay that doubles
 *   from `minReconnectMs` to `maxReconnectMs` (Retry-After when the server sends one), reset by
 *   every successful connection. Nothing received for `idleTimeoutMs` (the server sends a
 *   keep-alive at least every 15 s): the connection is dropped and reopened.
 * - `onBook` and the other callbacks must not throw (an exception is taken for a broken
 *   connection and reconnects).
 * - A 4xx other than 429 (bad key, bad chainId…) will not get better by retrying: `onError`
 *   is told, and the subscription stops.
 */
import type { OrderbookResponse as Orderbook } from '@pmm/protocol';
import { PmmApiError, apiErrorFromResponse, apiErrorFromText } from './pmm-api-error';
import { SseParser, type ServerSentEvent } from './sse-parser';

export interface SubscribeOrderbookOptions {
  /** The chain's book went away (`unavailable`, a SERVICE_UNAVAILABLE error). */
  onUnavailable?: (error: PmmApiError) => void;
  /** A connection failed or was refused; `willRetry` false means the subscription stopped. */
  onError?: (error: PmmApiError, willRetry: boolean) => void;
  /** Resume after this block (sent as Last-Event-ID on the first connection). */
  lastEventId?: number;
  /** First reconnect delay, ms (default 500). */
  minReconnectMs?: number;
  /** Longest reconnect delay, ms (default 30 000). */
  maxReconnectMs?: number;
  /** Reconnect when nothing arrives for this long, ms (default 45 000: three keep-alives). */
  idleTimeoutMs?: number;
  /** Stops the subscription when aborted (like `close()`). */
  signal?: AbortSignal;
}

export interface OrderbookSubscription {
  /** Stops the subscription and closes the connection. Idempotent. */
  close(): void;
  /** The block of the last book delivered (what a reconnect sends as Last-Event-ID). */
  readonly lastEventId: number | undefined;
  /** Resolves when the subscription has stopped (close, abort, or an error that is not retried). */
  readonly done: Promise<void>;
}

/** Statuses that retrying cannot fix. */
const isFatal = (status: number) => status >= 400 && status < 500 && status !== 429;

export function subscribeOrderbook(
  api: { baseUrl: string; apiKey: string },
  chainId: number | undefined,
  onBook: (book: Orderbook) => void,
  options: SubscribeOrderbookOptions = {},
): OrderbookSubscription {
  const minDelay = options.minReconnectMs ?? 500;
  const maxDelay = options.maxReconnectMs ?? 30_000;
  const idleMs = options.idleTimeoutMs ?? 45_000;
  const url = `${api.baseUrl.replace(/\/+$/, '')}/v2/price/stream${chainId === undefined ? '' : `?chainId=${chainId}`}`;
  let lastEventId = options.lastEventId;
  let stopped = false;
  let current: AbortController | undefined;
  let wake: (() => void) | undefined;

  const stop = () => {
    stopped = true;
    current?.abort();
    wake?.();
  };
  options.signal?.addEventListener('abort', stop, { once: true });
  if (options.signal?.aborted) stopped = true;

  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        wake = undefined;
        resolve();
      }
      wake = done;
    });

  const onEvent = (e: ServerSentEvent) => {
    if (e.event === 'book') {
      const book = JSON.parse(e.data) as Orderbook;
      lastEventId = book.blockNumber;
      onBook(book);
    } else if (e.event === 'unavailable') {
      const error = apiErrorFromResponse({ status: 503, headers: { get: () => null } }, JSON.parse(e.data));
      options.onUnavailable?.(error);
    }
  };

  /** One connection; resolves when it ends (a delay hint in ms from Retry-After, if any). */
  const connect = async (): Promise<{ connected: boolean; retryAfterMs?: number }> => {
    const controller = (current = new AbortController());
    let streaming = false;
    let idle: ReturnType<typeof setTimeout> | undefined;
    const touch = () => {
      if (idle) clearTimeout(idle);
      idle = setTimeout(() => controller.abort(), idleMs);
    };
    touch();
    try {
      const headers: Record<string, string> = { 'X-API-KEY': api.apiKey, Accept: 'text/event-stream' };
      if (lastEventId !== undefined) headers['Last-Event-ID'] = String(lastEventId);
      const res = await fetch(url, { headers, signal: controller.signal });
      if (!res.ok || !res.body) {
        const error = apiErrorFromText(res, await res.text());
        const fatal = isFatal(res.status);
        if (fatal) stopped = true;
        options.onError?.(error, !fatal);
        return { connected: false, retryAfterMs: error.retryAfterMs };
      }
      streaming = true;
      const parser = new SseParser(onEvent);
      const decoder = new TextDecoder();
      const reader = res.body.getReader();
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        touch();
        parser.push(decoder.decode(value, { stream: true }));
      }
      return { connected: true };
    } catch (err) {
      if (!stopped) {
        const message = err instanceof Error ? err.message : String(err);
        options.onError?.(new PmmApiError(0, 'NETWORK_ERROR', message), true);
      }
      return { connected: streaming };
    } finally {
      if (idle) clearTimeout(idle);
    }
  };

  const done = (async () => {
    let delay = minDelay;
    while (!stopped) {
      const { connected, retryAfterMs } = await connect();
      if (stopped) break;
      if (connected) delay = minDelay;
      await sleep(retryAfterMs ?? delay);
      delay = Math.min(maxDelay, delay * 2);
    }
    options.signal?.removeEventListener('abort', stop);
  })();

  return {
    close: stop,
    get lastEventId() {
      return lastEventId;
    },
    done,
  };
}
