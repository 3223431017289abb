/**
 * The request frame: what every request on every port gets, once, as the first step of the
 * route table (route-table.ts):
 * - request id: the caller's `X-Request-Id` when it is a safe token, else ours (a UUID); ours is
 *   kept either way as `serviceRequestId`. Echoed in `X-Request-Id`, kept in `res.locals` (the
 *   shape `sendErrorEnvelope` reads); the per-request child logger is created only when
 *   something logs;
 * - fixed headers (the public port's security headers);
 * - optionally the end-to-end timeout: 503 SERVICE_UNAVAILABLE in the envelope, the upstream
 *   request destroyed; but 408 REQUEST_TIMEOUT (and the connection closed) while the client's
 *   body is still arriving: a body shorter than its Content-Length is the client's fault;
 * - when the response ends: `http_requests_total` and `http_request_duration_seconds` (route
 *   PATTERN, never the raw URL; when given a registry) and the access log line (info for errors, debug otherwise;
 *   never a key).
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ApiError, isRequestId, REQUEST_ID_HEADER } from '@pmm/protocol';
import type { Logger } from '../service/logger';
import type { Metrics } from '../service/metrics';
import { httpRequestMetrics, type HttpRequestMetrics } from './http-metrics';
import { LazyRequestContext } from './request-context';
import { sendError } from './send-error';
import type { Step } from './route-table';

/** What runs upstream for a request (the gateway's request to the signer): the timeout destroys it. */
export interface Upstream {
  destroy(): void;
}

/** `res.locals` of a request: the lazy context, plus what a request's steps share. */
export class RequestLocals extends LazyRequestContext {
  /** Our own id of the request (`requestId` is the caller's when it sent a valid one). */
  serviceRequestId = '';
  /** The route pattern for metrics and logs; read from the router when not set. */
  route?: string;
  timer?: NodeJS.Timeout;
  /** The upstream request while it runs (the timeout destroys it). */
  upstream?: Upstream;
  /** Who asked, once known (the integrator): on the access log line. */
  caller?: string;
  quiet?: boolean;
}

export interface RequestFrameOptions {
  logger: Logger;
  /** Where the request counter and latency go; none for the operator ports (scrapes are not traffic). */
  metrics?: Metrics;
  /**
   * Or the recorder itself, made by the caller on its registry (httpRequestMetrics), when
   * something before the table answers requests too (the gateway's door: sign-admission.ts).
   */
  recorder?: HttpRequestMetrics;
  /** Set on every response (e.g. the security headers). */
  headers?: ReadonlyArray<readonly [string, string]>;
  /** The end-to-end request timeout; none when absent. */
  timeoutMs?: number;
  onTimeout?: () => void;
  /** Called when a response has been sent, with its status. */
  onFinish?: (req: IncomingMessage, status: number) => void;
}

/** The locals of a framed request (after the frame step). */
export function localsOf(res: ServerResponse): RequestLocals {
  return (res as ServerResponse & { locals: RequestLocals }).locals;
}

function routeOf(req: IncomingMessage, locals: RequestLocals): string {
  if (locals.route) return locals.route;
  const route = (req as IncomingMessage & { route?: { path?: unknown } }).route;
  return typeof route?.path === 'string' ? route.path : 'unmatched';
}

/** The frame step of a route table. */
export function requestFrame(opts: RequestFrameOptions): Step {
  const recorder = opts.recorder ?? (opts.metrics ? httpRequestMetrics(opts.metrics) : undefined);
  const { logger, timeoutMs } = opts;
  const headers = opts.headers ?? [];

  const finish = (req: IncomingMessage, res: ServerResponse, locals: RequestLocals) => {
    if (locals.timer) clearTimeout(locals.timer);
    const seconds = Number(process.hrtime.bigint() - locals.startedAt) / 1e9;
    const route = routeOf(req, locals);
    const method = req.method ?? 'GET';
    const status = res.statusCode;
    recorder?.observe(method, route, status, seconds);
    opts.onFinish?.(req, status);
    const level = status >= 400 && !locals.quiet ? 'info' : 'debug';
    if (logger.isLevelEnabled(level)) {
      locals.log.log(level, 'request', { method, route, status, ms: seconds * 1e3, integrator: locals.caller });
    }
  };

  const armTimeout = (req: IncomingMessage, res: ServerResponse, locals: RequestLocals, ms: number) => {
    locals.timer = setTimeout(() => {
      if (res.headersSent) return;
      if (!req.complete) {
        // The rest of the body may still come: this connection cannot be reused.
        res.setHeader('Connection', 'close');
        sendError(res, new ApiError('REQUEST_TIMEOUT', `body: not received in full within ${ms} ms`));
        return;
      }
      opts.onTimeout?.();
      sendError(res, new ApiError('SERVICE_UNAVAILABLE', `request timed out after ${ms} ms`));
      const upstream = locals.upstream;
      locals.upstream = undefined;
      upstream?.destroy();
    }, ms);
    res.once('close', () => clearTimeout(locals.timer));
  };

  return (req, res, next) => {
    // Ours always; the caller's, when valid, is the one it sees and is logged apart.
    const serviceRequestId = randomUUID();
    const caller = req.headers[REQUEST_ID_HEADER];
    const requestId = isRequestId(caller) ? caller : serviceRequestId;
    const locals = new RequestLocals(requestId, process.hrtime.bigint(), logger);
    locals.serviceRequestId = serviceRequestId;
    if (requestId !== serviceRequestId) locals.bind({ serviceRequestId });
    (res as { locals?: unknown }).locals = locals;
    res.setHeader('X-Request-Id', requestId);
    for (const [name, value] of headers) res.setHeader(name, value);
    res.once('finish', () => finish(req, res, locals));
    if (timeoutMs !== undefined) armTimeout(req, res, locals, timeoutMs);
    next();
  };
}
