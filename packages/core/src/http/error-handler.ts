/**
 * The one error renderer of an app: every error becomes the spec's envelope. Body-parser
 * failures map to INVALID_JSON / PAYLOAD_TOO_LARGE; anything unknown is INTERNAL_ERROR with
 * a generic message (never the exception text). 4xx log at info, 5xx at error.
 */
import type { ErrorRequestHandler, RequestHandler } from 'express';
import { ApiError, toErrorEnvelope } from '../errors';
import { contextOf } from './request-context';

interface BodyParserError {
  type?: string;
  status?: number;
}

function normalize(err: unknown): unknown {
  const type = (err as BodyParserError | null)?.type;
  if (type === 'entity.parse.failed') return new ApiError('INVALID_JSON', 'body: malformed JSON');
  if (type === 'entity.too.large') return new ApiError('PAYLOAD_TOO_LARGE', 'body: larger than the size limit');
  if (type === 'encoding.unsupported' || type === 'charset.unsupported')
    return new ApiError('INVALID_JSON', 'body: unsupported encoding or charset');
  return err;
}

export function errorHandler(): ErrorRequestHandler {
  return (err, _req, res, next) => {
    if (res.headersSent) return next(err);
    const ctx = contextOf(res);
    const requestId = ctx.requestId ?? 'unknown';
    const { status, body, headers } = toErrorEnvelope(normalize(err), requestId);
    if (status >= 500) ctx.log?.error('request failed', { code: body.error.code, error: err });
    else ctx.log?.info('request rejected', { code: body.error.code, reason: body.error.message });
    res.status(status).set(headers).json(body);
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
