/**
 * Writes a whole JSON (or other) answer with node's response API: status, type, exact length,
 * one write. The one writer of non-error answers for the route table's steps (route-table.ts).
 */
import type { ServerResponse } from 'node:http';

export const JSON_TYPE = 'application/json; charset=utf-8';

/** Answers `body` (a JSON value is serialised) unless the answer has already started (a timeout). */
export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Readonly<Record<string, string>> = {},
): void {
  const bytes = Buffer.isBuffer(body) ? body : Buffer.from(typeof body === 'string' ? body : JSON.stringify(body));
  sendBytes(res, status, bytes, { 'Content-Type': JSON_TYPE, ...headers });
}

/** Answers `bytes` with `headers` (Content-Type among them) unless the answer has already started. */
export function sendBytes(
  res: ServerResponse,
  status: number,
  bytes: Buffer,
  headers: Readonly<Record<string, string>>,
): void {
  if (res.headersSent) return;
  res.statusCode = status;
  for (const name in headers) res.setHeader(name, headers[name]!);
  res.setHeader('Content-Length', bytes.length);
  res.end(bytes);
}
