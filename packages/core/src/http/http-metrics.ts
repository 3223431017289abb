/**
 * Request counter and latency histogram, labelled by route PATTERN (never the raw URL, whose
 * cardinality is unbounded) and status code.
 */
import type { Request, RequestHandler, Response } from 'express';
import type { Metrics } from '../metrics';

function routeOf(req: Request): string {
  const route = req.route as { path?: string } | undefined;
  return route?.path ? `${req.baseUrl}${route.path}` : 'unmatched';
}

export function httpMetrics(metrics: Metrics): RequestHandler {
  const requests = metrics.counter('http_requests_total', 'HTTP requests by route pattern and status', [
    'method',
    'route',
    'code',
  ] as const);
  const latency = metrics.histogram('http_request_duration_seconds', 'HTTP request latency', [
    'method',
    'route',
  ] as const);
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
