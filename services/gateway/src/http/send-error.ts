/**
 * Writes an error envelope outside the Express error chain (timers, proxy callbacks, stream
 * events, the fast path), exactly as core's errorHandler would: status, extra headers,
 * `{"error":{...}}`, 4xx logged at info and 5xx at warn. Does nothing when a response was
 * already started (the caller decides whether to destroy it).
 */
import type { ServerResponse } from 'node:http';
import { toErrorEnvelope } from '@pmm/protocol';
import { type RequestContext } from '@pmm/core';

export function sendError(res: ServerResponse, err: unknown): void {
  if (res.headersSent || res.writableEnded || res.destroyed) return;
  const ctx = ((res as { locals?: Partial<RequestContext> }).locals ?? {}) as Partial<RequestContext>;
  const { status, body, headers } = toErrorEnvelope(err, ctx.requestId ?? 'unknown');
  if (status >= 500) ctx.log?.warn('request failed', { code: body.error.code, reason: body.error.message });
  else ctx.log?.info('request rejected', { code: body.error.code, reason: body.error.message });
  const text = JSON.stringify(body);
  res.statusCode = status;
  for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', Buffer.byteLength(text));
  res.end(text);
}
