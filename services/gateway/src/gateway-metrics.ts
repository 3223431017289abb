/**
 * The gateway's own metrics (declared up front), beside core's per-route request counter and
 * latency histogram: book age and presence per chain (refreshed at each scrape), upstream
 * (signer) failures, timeouts, rate-limit refusals, and the price streams (open streams per
 * chain, events written, books skipped for slow clients), the operator's halts.
 */
import { HALT_SCOPE_KINDS, haltScopeKind, type HaltView, type Metrics, type Step } from '@pmm/core';
import type { BookCache } from './price/book-cache';
import type { StreamMetrics } from './stream/stream-hub';

export function gatewayMetrics(metrics: Metrics) {
  const bookAge = metrics.gauge('gateway_book_age_seconds', 'Seconds since the block of the served book, per chain', [
    'chain',
  ] as const);
  const bookAvailable = metrics.gauge('gateway_book_available', '1 when the chain has a book in Redis, else 0', [
    'chain',
  ] as const);
  const upstreamErrors = metrics.counter(
    'gateway_upstream_errors_total',
    'Signer requests that failed, by error code',
    ['reason'] as const,
  );
  // At 0 from the start, so that increase() sees the first refusal (deploy/prometheus/alerts.yml).
  upstreamErrors.inc({ reason: 'TOKEN_REFUSED' }, 0);
  const timeouts = metrics.counter(
    'gateway_request_timeouts_total',
    'Requests answered 503 by the request timeout',
    [] as const,
  );
  const rateLimited = metrics.counter('gateway_rate_limited_total', 'Requests refused with 429', [] as const);
  const streamsOpen = metrics.gauge('gateway_streams_open', 'Open /v2/price/stream connections, per chain', [
    'chain',
  ] as const);
  const streamEvents = metrics.counter(
    'gateway_stream_events_total',
    'Price stream events written to clients, by event',
    ['event'] as const,
  );
  const streamSkipped = metrics.counter(
    'gateway_stream_books_skipped_total',
    'Books a slow stream client skipped (replaced by a newer one before it could take them)',
    [] as const,
  );
  const streamFanout = metrics.histogram(
    'gateway_stream_fanout_seconds',
    'Time to write one book to every open stream of its chain, per chain (compared with its block interval)',
    ['chain'] as const,
  );
  const sentBook = streamEvents.labels('book');
  const sentUnavailable = streamEvents.labels('unavailable');
  const streams: StreamMetrics = {
    opened: (chainId) => streamsOpen.inc({ chain: String(chainId) }),
    closed: (chainId) => streamsOpen.dec({ chain: String(chainId) }),
    sent: (event) => (event === 'book' ? sentBook : sentUnavailable).inc(),
    skipped: () => streamSkipped.inc(),
    fanout: (chainId, seconds) => streamFanout.observe({ chain: String(chainId) }, seconds),
  };

  const haltsActive = metrics.gauge(
    'gateway_halts_active',
    'Active operator halts (npm run risk), by the kind of their scope, as this gateway last read them',
    ['scope'] as const,
  );
  const haltOldest = metrics.gauge(
    'gateway_halt_oldest_timestamp_seconds',
    'Unix time the oldest active halt was made; 0 when nothing is halted',
    [] as const,
  );

  /** Sets the halt gauges from the gateway's last good read (what it shows, not what it decides); before each scrape. */
  const refreshHaltGauges = (halts: HaltView): void => {
    const { halts: active } = halts.lastRead();
    for (const kind of HALT_SCOPE_KINDS) haltsActive.set({ scope: kind }, 0);
    for (const h of active) haltsActive.inc({ scope: haltScopeKind(h.scope) });
    if (active.length > 0) haltOldest.set(Math.min(...active.map((h) => h.at)) / 1000);
    else haltOldest.set(0);
  };

  /** Mount before the /metrics route: reads each chain's book (cache or Redis) and sets the gauges. */
  const refreshBookGauges = (books: BookCache, chains: readonly number[]): Step => {
    return (_req, _res, next) => {
      void Promise.all(
        chains.map(async (chainId) => {
          const chain = String(chainId);
          try {
            const entry = await books.get(chainId);
            bookAvailable.set({ chain }, entry ? 1 : 0);
            if (entry && entry.blockTime > 0) bookAge.set({ chain }, Math.max(0, Date.now() / 1000 - entry.blockTime));
            else bookAge.remove({ chain });
          } catch {
            // Redis unreachable: the book's state is unknown, so report neither value.
            bookAvailable.remove({ chain });
            bookAge.remove({ chain });
          }
        }),
      ).then(() => next());
    };
  };

  return {
    refreshBookGauges,
    refreshHaltGauges,
    upstreamError: (reason: string) => upstreamErrors.inc({ reason }),
    timeout: () => timeouts.inc(),
    rateLimited: () => rateLimited.inc(),
    streams,
  };
}
