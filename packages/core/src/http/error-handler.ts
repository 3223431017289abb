/**
 * The one error renderer of an app: every error becomes the spec's envelope. Body-parser
 * failures map to INVALID_JSON / PAYLOAD_TOO_LARGE; anything unknown is INTERNAL_ERROR with
 * a generic message (never the exception text); rendered and logged by sendError.
 */
import type { ErrorRequestHandler, RequestHandler } from 'express';
import { ApiError, toErrorEnvelope } from '@pmm/protocol';
import type { RequestContext } from './request-context';

interface BodyParserError {
  type?: string;
  status?: number;
  code?: string;
  expose?: boolean;
}

/**
 * Maps what body-parser, raw-body, zlib and Express raise for a client's request to our
 * codes; anything else passes unchanged (and an unknown error becomes INTERNAL_ERROR).
 */
export function normalizeError(err: unknown): unknown {
  if (err instanceof ApiError || typeof err !== 'object' || err === null) return err;
  const { type, status, code, expose } = err as BodyParserError;
  if (type === 'entity.parse.failed') return new ApiError('INVALID_JSON', 'body: malformed JSON');
  if (type === 'entity.too.large') return new ApiError('PAYLOAD_TOO_LARGE', 'body: larger than the size limit');
  if (type === 'encoding.unsupported' || type === 'charset.unsupported')
    return new ApiError('INVALID_JSON', 'body: unsupported encoding or charset');
  // zlib's errors (Z_DATA_ERROR "incorrect header check", Z_BUF_ERROR "unexpected end of
  // file", brotli's ERR__ERROR_FORMAT_*) mean a gzip/deflate/br body that does not decode or
  // is truncated.
  if (typeof code === 'string' && /^(Z_|ERR__|ERR_BROTLI|ERR_ZLIB)/.test(code))
    return new ApiError('INVALID_JSON', 'body: does not decode with its Content-Encoding');
  if (type === 'request.size.invalid')
    return new ApiError('INVALID_JSON', 'body: its length does not match Content-Length');
  if (type === 'request.aborted') return new ApiError('INVALID_JSON', 'body: the upload was aborted');
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
 * (`res.locals`), and logs it (4xx info, 5xx error). The same bytes whether called by
 * {@link errorHandler} or by a node:http fast path.
 */
export function sendErrorEnvelope(res: EnvelopeTarget, err: unknown): void {
  const ctx = ((res as { locals?: Partial<RequestContext> }).locals ?? {}) as Partial<RequestContext>;
  const { status, body, headers } = toErrorEnvelope(normalizeError(err), ctx.requestId ?? 'unknown');
  if (status >= 500) ctx.log?.error('request failed', { code: body.error.code, error: err });
  else ctx.log?.info('request rejected', { code: body.error.code, reason: body.error.message });
  // What Express's res.status().set().json() writes.
  const text = JSON.stringify(body);
  res.statusCode = status;
  for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', Buffer.byteLength(text));
  res.end(text);
}

export function errorHandler(): ErrorRequestHandler {
  return (err, _req, res, next) => {
    if (res.headersSent) return next(err);
    sendErrorEnvelope(res, err);
  };
}

/** 404 for unknown routes, in the envelope. Mount after every route. */
export function notFound(): RequestHandler {
  return (req, _res, next) => next(new ApiError('NOT_FOUND', `no route for ${req.method} ${req.path}`));
}

/** 405 for a known path with the wrong method; sets `Allow`. */
export function methodNotAllowed(allowed: string[]): RequestHandler {
  return (req, _res, next) =>
    next(new ApiError('METHOD_NOT_ALLOWED', `${req.method} is not allowed here`, { Allow: allowed.join(', ') }));
}
