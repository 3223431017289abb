/**
 * The error envelope for callers outside the Express error chain (timers, proxy callbacks,
 * stream events, node:http fast paths): the error handler's own writer (sendErrorEnvelope,
 * 4xx logged at info, 5xx at error), but nothing once a response has started (the caller
 * decides whether to destroy it).
 */
import type { ServerResponse } from 'node:http';
import { sendErrorEnvelope } from './error-handler';

export function sendError(res: ServerResponse, err: unknown): void {
  if (res.headersSent || res.writableEnded || res.destroyed) return;
  sendErrorEnvelope(res, err);
}
