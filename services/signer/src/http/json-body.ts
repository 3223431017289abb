/**
 * Reads a JSON request body with a size limit, answering as docs/decisions.md#error-precedence wants:
 * over the limit 413 PAYLOAD_TOO_LARGE, empty or malformed 400 INVALID_JSON.
 *
 * `express.json()` is not used on its own because it turns an empty body into `{}` (which
 * would then be a 422 "tokenIn: is required" instead of the spec's 400 INVALID_JSON), and
 * skips bodies whose Content-Type is not JSON (the gateway forwards the bytes untouched).
 * The body is parsed whatever its Content-Type; gzip/deflate/br are inflated by body-parser
 * (a body that does not decode is 400 INVALID_JSON, see core's normalizeError). A key that
 * appears twice in one object is 400 INVALID_JSON too: JSON.parse would keep the last value,
 * and a signing API must not guess which one the client meant.
 */
import express, { type RequestHandler } from 'express';
import { ApiError, findDuplicateKey } from '@pmm/protocol';

/** Default limit of a sign request body (docs/decisions.md#body-size-and-time-limits). */
export const SIGN_BODY_LIMIT_BYTES = 16 * 1024;

/** Keys are echoed in messages; a hostile one may be long. */
function clip(key: string): string {
  return key.length > 64 ? `${key.slice(0, 64)}…` : key;
}

/** The JSON value of a sign request's body bytes, or a thrown 400 INVALID_JSON. */
export function parseJsonBody(body: Buffer): unknown {
  const text = body.toString('utf8');
  if (text.trim() === '') throw new ApiError('INVALID_JSON', 'body: empty; a JSON object is required');
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new ApiError('INVALID_JSON', 'body: malformed JSON');
  }
  const duplicate = findDuplicateKey(text, value);
  if (duplicate !== undefined)
    throw new ApiError('INVALID_JSON', `body: duplicate key ${JSON.stringify(clip(duplicate))}`);
  return value;
}

export function jsonBody(limitBytes: number = SIGN_BODY_LIMIT_BYTES): RequestHandler[] {
  const raw = express.raw({ limit: limitBytes, type: () => true });
  const parse: RequestHandler = (req, _res, next) => {
    const body: unknown = req.body;
    try {
      req.body = parseJsonBody(Buffer.isBuffer(body) ? body : Buffer.alloc(0));
    } catch (err) {
      return next(err);
    }
    next();
  };
  return [raw, parse];
}
