/**
 * The JSON value of a sign request's body, as docs/decisions/0001-error-precedence.md wants: empty or
 * malformed is 400 INVALID_JSON, whatever the Content-Type (the gateway forwards the client's
 * bytes untouched). A key that appears twice in one object is 400 INVALID_JSON too:
 * JSON.parse would keep the last value, and a signing API must not guess which one the client
 * meant.
 */
import { ApiError, findDuplicateKey } from '@pmm/protocol';

/** Default limit of a sign request body (docs/decisions/0010-body-size-and-time-limits.md). */
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
