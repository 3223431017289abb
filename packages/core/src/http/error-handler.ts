/**
 * The one error renderer of every port (the route table's and the body readers'): every error
 * becomes the spec's envelope. The client faults that the HTTP stack and zlib raise map to our
 * codes; anything unknown is INTERNAL_ERROR with a generic message (never the exception text).
 */
import { ApiError, toErrorEnvelope } from '@pmm/protocol';
import type { RequestContext } from './request-context';

interface ClientFault {
  status?: number;
  code?: string;
  expose?: boolean;
}

/**
 * Maps what zlib and the router raise for a client's request to our codes; anything else passes
 * unchanged (and an unknown error becomes INTERNAL_ERROR).
 */
export function normalizeError(err: unknown): unknown {
  if (err instanceof ApiError || typeof err !== 'object' || err === null) return err;
  const { status, code, expose } = err as ClientFault;
  // zlib's errors (Z_DATA_ERROR "incorrect header check", Z_BUF_ERROR "unexpected end of
  // file", brotli's ERR__ERROR_FORMAT_*) mean a gzip/deflate/br body that does not decode or
  // is truncated.
  if (typeof code === 'string' && /^(Z_|ERR__|ERR_BROTLI|ERR_ZLIB)/.test(code))
    return new ApiError('INVALID_JSON', 'body: does not decode with its Content-Encoding');
  // Any other client fault reported by the HTTP stack (e.g. an undecodable path parameter).
  if (expose === true && typeof status === 'number' && status >= 400 && status < 500)
    return new ApiError('MALFORMED_REQUEST', 'malformed request');
  return err;
}

/** What the envelope writer needs of a response (node:http's ServerResponse has it). */
export interface EnvelopeTarget {
  statusCode: number;
  setHeader(name: string, value: string | number): unknown;
  end(text: string): unknown;
}

/**
 * Writes `err` as the envelope on a response not yet started, with the request's context
 * (`res.locals`), and logs it (4xx info, 5xx error; a quiet request, a refusal that is counted
 * rather than logged one by one, only on its access log line at debug).
 */
export function sendErrorEnvelope(res: EnvelopeTarget, err: unknown): void {
  const ctx = ((res as { locals?: Partial<RequestContext> }).locals ?? {}) as Partial<RequestContext>;
  const { status, body, headers } = toErrorEnvelope(normalizeError(err), ctx.requestId ?? 'unknown');
  // A quiet request has only its access log line, at debug: no logger is made for it here.
  if (!ctx.quiet) {
    if (status >= 500) ctx.log?.error('request failed', { code: body.error.code, error: err });
    else ctx.log?.info('request rejected', { code: body.error.code, reason: body.error.message });
  }
  const text = JSON.stringify(body);
  res.statusCode = status;
  for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', Buffer.byteLength(text));
  res.end(text);
}
