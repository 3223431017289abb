/**
 * Writes an error envelope on a bare node:http response: the one error renderer of every
 * service (Express's errorHandler ends here too, and so do timers, proxy callbacks, stream
 * events and fast paths outside Express). Status, extra headers, `{"error":{...}}`; 4xx logged
 * at info, 5xx at error. Does nothing when a response was already started (the caller decides
 * whether to destroy it).
 */
import type { ServerResponse } from 'node:http';
import { toErrorEnvelope } from '@pmm/protocol';
import type { RequestContext } from './request-context';

/**
 * @param err what to render (an ApiError; anything else is INTERNAL_ERROR with a generic message)
 * @param cause what to log for a 5xx (default `err`; the error handler passes the original
 *   error it normalised)
 */
export function sendError(res: ServerResponse, err: unknown, cause: unknown = err): void {
  if (res.headersSent || res.writableEnded || res.destroyed) return;
  const ctx = ((res as { locals?: Partial<RequestContext> }).locals ?? {}) as Partial<RequestContext>;
  const { status, body, headers } = toErrorEnvelope(err, ctx.requestId ?? 'unknown');
  if (status >= 500) ctx.log?.error('request failed', { code: body.error.code, error: cause });
  else ctx.log?.info('request rejected', { code: body.error.code, reason: body.error.message });
  const text = JSON.stringify(body);
  res.statusCode = status;
  for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', Buffer.byteLength(text));
  res.end(text);
}
