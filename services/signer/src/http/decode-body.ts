/**
 * A sign body in its `Content-Encoding` (gzip, deflate, br or identity), decoded whole, at most
 * `limit` bytes once decoded: the same limit as on the wire, so a small compressed body cannot
 * expand into a large one. What fails is the client's: 413 past the limit, 400 INVALID_JSON for
 * an unknown encoding or bytes that do not decode (core normalizeError maps zlib's codes).
 */
import { brotliDecompressSync, gunzipSync, inflateSync } from 'node:zlib';
import { ApiError, bodyEncoding, type BodyEncoding } from '@pmm/protocol';

const DECODERS: Record<
  Exclude<BodyEncoding, 'identity'>,
  (bytes: Buffer, options: { maxOutputLength: number }) => Buffer
> = {
  gzip: gunzipSync,
  'x-gzip': gunzipSync,
  deflate: inflateSync,
  br: brotliDecompressSync,
};

export function decodeBody(bytes: Buffer, encoding: string | undefined, limit: number): Buffer {
  const name = bodyEncoding(encoding);
  if (name === undefined || name === 'identity') return bytes;
  const decode = DECODERS[name];
  try {
    return decode(bytes, { maxOutputLength: limit });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE')
      throw new ApiError('PAYLOAD_TOO_LARGE', `body: larger than ${limit} bytes`);
    throw err;
  }
}
