/**
 * Request id and per-request logger. The id comes from the caller's `X-Request-Id` when it is
 * a safe token (the gateway forwards its own to the signer, integrators may send one), else a
 * new UUID. It is echoed in the `X-Request-Id` header of every response, put in every error
 * body, and carried by the child logger of the request.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { isRequestId, REQUEST_ID_HEADER } from '@pmm/protocol';
import type { Logger } from '../logger';

export interface RequestContext {
  requestId: string;
  log: Logger;
  startedAt: bigint;
}

/** The context set by `requestContext()`; a fallback for responses written before it ran. */
export function contextOf(res: Response): RequestContext {
  return res.locals as RequestContext;
}

/**
 * `res.locals` of requests served outside Express (beginRequest, the gateway's request frame), in the shape {@link contextOf} reads: the child logger
 * is made only when something logs (most requests log nothing).
 */
export class LazyRequestContext implements RequestContext {
  private child?: Logger;
  private bound?: Record<string, unknown>;
  constructor(
    readonly requestId: string,
    readonly startedAt: bigint,
    private readonly logger: Logger,
  ) {}
  get log(): Logger {
    return (this.child ??= this.logger.child({ requestId: this.requestId, ...this.bound }));
  }
  /** Adds fields to every later log line of this request (e.g. the integrator once it is known). */
  bind(fields: Record<string, unknown>): void {
    if (this.child) this.child = this.child.child(fields);
    else this.bound = { ...this.bound, ...fields };
  }
}

/** The caller's `X-Request-Id` when it is a safe token, else a new UUID. */
export function requestIdOf(req: { headers: IncomingHttpHeaders }): string {
  const incoming = req.headers[REQUEST_ID_HEADER];
  return isRequestId(incoming) ? incoming : randomUUID();
}

/**
 * The prologue of a request outside Express (the signer's sign route): its id, echoed in
 * `X-Request-Id`, and a lazy context as `res.locals`, where {@link contextOf} and the error
 * envelope find them.
 */
export function beginRequest(req: IncomingMessage, res: ServerResponse, logger: Logger): LazyRequestContext {
  const requestId = requestIdOf(req);
  const locals = new LazyRequestContext(requestId, process.hrtime.bigint(), logger);
  (res as { locals?: unknown }).locals = locals;
  res.setHeader('X-Request-Id', requestId);
  return locals;
}

/** The Express form; Express's own `res.locals` object keeps the same fields. */
export function requestContext(logger: Logger): RequestHandler {
  return (req: Request, res: Response, next: NextFunction) => {
    const { requestId, startedAt } = beginRequest(req, res, logger);
    res.locals = { requestId, startedAt, log: logger.child({ requestId }) };
    next();
  };
}
