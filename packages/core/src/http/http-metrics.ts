/**
 * Request counter and latency histogram, labelled by route PATTERN (never the raw URL, whose
 * cardinality is unbounded) and status code.
 */
import type { Metrics } from '../service/metrics';

/** Records one finished request (the request frame calls it). */
export interface HttpRequestMetrics {
  observe(method: string, route: string, status: number, seconds: number): void;
}

/** Declares the two metrics on `metrics` (once per registry) and returns their recorder. */
export function httpRequestMetrics(metrics: Metrics): HttpRequestMetrics {
  const requests = metrics.counter('http_requests_total', 'HTTP requests by route pattern and status', [
    'method',
    'route',
    'code',
  ] as const);
  const latency = metrics.histogram('http_request_duration_seconds', 'HTTP request latency', [
    'method',
    'route',
  ] as const);
  // Label-bound children, cached: prom-client hashes a labels object on every call otherwise.
  const counters = new Map<string, { inc(): void }>();
  const histograms = new Map<string, { observe(v: number): void }>();
  return {
    observe(method, route, status, seconds) {
      const ck = `${method} ${route} ${status}`;
      let c = counters.get(ck);
      if (!c) counters.set(ck, (c = requests.labels(method, route, String(status))));
      c.inc();
      const hk = `${method} ${route}`;
      let h = histograms.get(hk);
      if (!h) histograms.set(hk, (h = latency.labels(method, route)));
      h.observe(seconds);
    },
  };
}
