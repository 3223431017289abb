/**
 * What every public request needs, done once per request by the first middleware (or by the
 * fast path, fast-path.ts):
 * - request id (the caller's `X-Request-Id` when it is a safe token, else ours, a UUID; ours is
 *   kept either way as `serviceRequestId`), echoed in
 *   the `X-Request-Id` header and kept in `res.locals` in the shape core's `contextOf` reads;
 *   the per-request child logger is created only when something logs;
 * - the security headers (security-headers.ts);
 * - the end-to-end timeout: 503 SERVICE_UNAVAILABLE in the envelope, upstream aborted; but
 *   408 REQUEST_TIMEOUT (and the connection closed) while the client's body is still arriving:
 *   a body shorter than its Content-Length is the client's fault, not ours;
 * - when the response ends: the request counter and latency histogram (same names and labels
 *   as core's httpMetrics: route PATTERN, never the raw URL) and the access log line (info for
 *   errors, debug for successes; never the API key).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { ApiError, isRequestId, REQUEST_ID_HEADER } from '@pmm/protocol';
import { randomUUID } from 'node:crypto';
import { LazyRequestContext, type Logger, type Metrics, sendError, httpRequestMetrics } from '@pmm/core';
import type { ResolvedApiKey } from '../store/api-key-store';
import type { HeaderList } from './security-headers';

/** What runs upstream for a request: its HTTP request to the signer. */
export interface Upstream {
  destroy(): void;
}

/** Gives up the request's upstream, if one is running (the request timeout). */
function abortUpstream(locals: RequestLocals): void {
  const upstream = locals.upstream;
  locals.upstream = undefined;
  upstream?.destroy();
}

/** `res.locals` of a request: core's lazy context, plus what the gateway's steps share. */
export class RequestLocals extends LazyRequestContext {
  auth?: ResolvedApiKey;
  /** Route pattern for metrics and logs; set by the fast path, else read from Express. */
  route?: string;
  timer?: NodeJS.Timeout;
  /** The request to the signer while it runs (the timeout aborts it; see abortUpstream). */
  upstream?: Upstream;
  /** The gateway's own id of the request (`requestId` is the client's when it sent one). */
  serviceRequestId = '';
  /** Logged at debug whatever its status (a refusal that must not flood the log). */
  quiet?: boolean;
}

export interface RequestFrameOptions {
  logger: Logger;
  metrics: Metrics;
  timeoutMs: number;
  headers: HeaderList;
  onTimeout?: () => void;
  /** Called when a response has been sent, with its status (the failed-authentication count). */
  onFinish?: (req: IncomingMessage, status: number) => void;
}

export interface RequestFrame {
  /** Starts a request: id, headers, metrics and log on finish. The timeout is armed separately. */
  begin(req: IncomingMessage, res: ServerResponse): RequestLocals;
  /** Arms the request timeout (idempotent). */
  armTimeout(req: IncomingMessage, res: ServerResponse, locals: RequestLocals): void;
  /** The Express form: begin and arm at once. */
  middleware: RequestHandler;
}

export function createRequestFrame(opts: RequestFrameOptions): RequestFrame {
  const recorder = httpRequestMetrics(opts.metrics);
  const { logger, timeoutMs, headers } = opts;

  const finish = (req: IncomingMessage, res: ServerResponse, locals: RequestLocals) => {
    if (locals.timer) clearTimeout(locals.timer);
    const seconds = Number(process.hrtime.bigint() - locals.startedAt) / 1e9;
    const expressRoute = (req as Partial<Request>).route as { path?: string } | undefined;
    const route =
      locals.route ??
      (expressRoute?.path ? `${(req as Partial<Request>).baseUrl ?? ''}${expressRoute.path}` : 'unmatched');
    const method = req.method ?? 'GET';
    const status = res.statusCode;
    recorder.observe(method, route, status, seconds);
    opts.onFinish?.(req, status);
    const level = status >= 400 && !locals.quiet ? 'info' : 'debug';
    if (logger.isLevelEnabled(level)) {
      locals.log.log(level, 'request', {
        method,
        route,
        status,
        ms: seconds * 1e3,
        integrator: locals.auth?.integrator.id,
      });
    }
  };

  const begin = (req: IncomingMessage, res: ServerResponse): RequestLocals => {
    // Ours always; the client's, when valid, is the one it sees (docs/api.md) and is logged and
    // recorded apart (protocol SERVICE_REQUEST_ID_HEADER).
    const serviceRequestId = randomUUID();
    const client = req.headers[REQUEST_ID_HEADER];
    const requestId = isRequestId(client) ? client : serviceRequestId;
    const locals = new RequestLocals(requestId, process.hrtime.bigint(), logger);
    locals.serviceRequestId = serviceRequestId;
    if (requestId !== serviceRequestId) locals.bind({ serviceRequestId });
    (res as { locals?: unknown }).locals = locals;
    res.setHeader('X-Request-Id', requestId);
    for (const [name, value] of headers) res.setHeader(name, value);
    res.once('finish', () => finish(req, res, locals));
    return locals;
  };

  const armTimeout = (req: IncomingMessage, res: ServerResponse, locals: RequestLocals) => {
    if (locals.timer) return;
    locals.timer = setTimeout(() => {
      if (res.headersSent) return;
      if (!req.complete) {
        // The rest of the body may still come: this connection cannot be reused.
        res.setHeader('Connection', 'close');
        sendError(res, new ApiError('REQUEST_TIMEOUT', `body: not received in full within ${timeoutMs} ms`));
        return;
      }
      opts.onTimeout?.();
      sendError(res, new ApiError('SERVICE_UNAVAILABLE', `request timed out after ${timeoutMs} ms`));
      abortUpstream(locals);
    }, timeoutMs);
    // A client that leaves needs no timeout: sign-forward.ts gives up the upstream request itself.
    res.once('close', () => clearTimeout(locals.timer));
  };

  return {
    begin,
    armTimeout,
    middleware: (req: Request, res: Response, next: NextFunction) => {
      // The fast path may have begun this request and handed it over.
      const locals = res.locals instanceof RequestLocals ? res.locals : begin(req, res);
      armTimeout(req, res, locals);
      next();
    },
  };
}
