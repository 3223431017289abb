/**
 * Reads a JSON request body with a size limit, answering as DECISIONS.md wants:
 * over the limit 413 PAYLOAD_TOO_LARGE, empty or malformed 400 INVALID_JSON.
 *
 * `express.json()` is not used on its own because it turns an empty body into `{}` (which
 * would then be a 422 "tokenIn: is required" instead of the spec's 400 INVALID_JSON), and
 * skips bodies whose Content-Type is not JSON (the gateway forwards the bytes untouched).
 * The body is parsed whatever its Content-Type; gzip/deflate are inflated by body-parser.
 */
import express, { type RequestHandler } from 'express';
import { ApiError } from '@pmm/core';

/** Default limit of a sign request body (DECISIONS.md "Request handling" 10). */
export const SIGN_BODY_LIMIT_BYTES = 16 * 1024;

export function jsonBody(limitBytes: number = SIGN_BODY_LIMIT_BYTES): RequestHandler[] {
  const raw = express.raw({ limit: limitBytes, type: () => true });
  const parse: RequestHandler = (req, _res, next) => {
    const body: unknown = req.body;
    const text = Buffer.isBuffer(body) ? body.toString('utf8') : '';
    if (text.trim() === '') return next(new ApiError('INVALID_JSON', 'body: empty; a JSON object is required'));
    try {
      req.body = JSON.parse(text);
    } catch {
      return next(new ApiError('INVALID_JSON', 'body: malformed JSON'));
    }
    next();
  };
  return [raw, parse];
}
