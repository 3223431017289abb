/**
 * Request id and per-request logger. The id comes from the caller's `X-Request-Id` when it is
 * a safe token (the gateway forwards its own to the signer, integrators may send one), else a
 * new UUID. It is echoed in the `X-Request-Id` header of every response, put in every error
 * body, and carried by the child logger of the request.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { isRequestId, REQUEST_ID_HEADER } from '@pmm/protocol';
import type { Logger } from '../service/logger';

/** What `res.locals` holds for every framed request (request-frame.ts), as the envelope writer reads it. */
export interface RequestContext {
  requestId: string;
  log: Logger;
  startedAt: bigint;
  /** Logged at debug whatever its status (a refusal that must not flood the log). */
  quiet?: boolean;
}

/**
 * A request's context whose child logger is made only when something logs (most requests log
 * nothing).
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
