/**
 * The `Content-Encoding`s a sign body may arrive in, and the one check of a client's value. The
 * gateway forwards only the checked value to the signer; the signer decodes it.
 */
import { ApiError } from '../errors/api-error';

/** The `Content-Encoding`s a sign body may arrive in (the signer decodes them). */
export const BODY_ENCODINGS = ['identity', 'gzip', 'x-gzip', 'deflate', 'br'] as const;
export type BodyEncoding = (typeof BODY_ENCODINGS)[number];

/**
 * A body's `Content-Encoding`, normalised (trimmed, lower case): undefined when absent or empty,
 * else one of BODY_ENCODINGS, or a thrown 400 INVALID_JSON. The gateway forwards only this value
 * to the signer, never the client's text.
 */
export function bodyEncoding(value: string | undefined): BodyEncoding | undefined {
  const name = value?.trim().toLowerCase();
  if (name === undefined || name === '') return undefined;
  if ((BODY_ENCODINGS as readonly string[]).includes(name)) return name as BodyEncoding;
  throw new ApiError('INVALID_JSON', 'body: unsupported encoding or charset');
}
