/**
 * Request counter and latency histogram, labelled by route PATTERN (never the raw URL, whose
 * cardinality is unbounded) and status code.
 */
import type { Request, RequestHandler, Response } from 'express';
import type { Metrics } from '../metrics';

/** The route pattern Express matched (`<mount><path>`), or `unmatched`. */
export function routeOf(req: Pick<Request, 'route' | 'baseUrl'>): string {
  const route = req.route as { path?: string } | undefined;
  return route?.path ? `${req.baseUrl ?? ''}${route.path}` : 'unmatched';
}

/** The request counter and latency histogram every service exports (one declaration of their names and labels). */
export function declareHttpMetrics(metrics: Metrics) {
  return {
    requests: metrics.counter('http_requests_total', 'HTTP requests by route pattern and status', [
      'method',
      'route',
      'code',
    ] as const),
    latency: metrics.histogram('http_request_duration_seconds', 'HTTP request latency', ['method', 'route'] as const),
  };
}

export function httpMetrics(metrics: Metrics): RequestHandler {
  const { requests, latency } = declareHttpMetrics(metrics);
  return (req: Request, res: Response, next) => {
    const end = latency.startTimer();
    res.on('finish', () => {
      const route = routeOf(req);
      requests.inc({ method: req.method, route, code: String(res.statusCode) });
      end({ method: req.method, route });
    });
    next();
  };
}
