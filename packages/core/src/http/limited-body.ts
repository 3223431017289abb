/**
 * The one reader of a request body with a size limit (the gateway's and the signer's sign
 * routes). Over the limit → 413 PAYLOAD_TOO_LARGE, decided from `Content-Length` when present
 * (nothing is read) and otherwise by counting the streamed bytes (chunked uploads).
 *
 * After a 413 the rest of the upload is read and thrown away by the HTTP shell, up to a bound
 * (lingering-close.ts, for every answer given before its body was read), so that the client
 * reads the answer on a healthy connection.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ApiError } from '@pmm/protocol';
import { sendError } from './send-error';

function tooLarge(limit: number): ApiError {
  return new ApiError('PAYLOAD_TOO_LARGE', `body: larger than ${limit} bytes`);
}

/**
 * Reads the body of `req` (at most `limit` bytes) and calls `onBody` with it; or answers 413
 * itself. Nothing is called when the answer was already sent while the body was arriving (the
 * gateway's 408), or when the upload was aborted.
 */
export function readLimitedBody(
  req: IncomingMessage,
  res: ServerResponse,
  limit: number,
  onBody: (body: Buffer) => void,
): void {
  const declared = req.headers['content-length'];
  if (declared !== undefined && Number(declared) > limit) {
    sendError(res, tooLarge(limit));
    return;
  }
  const chunks: Buffer[] = [];
  let size = 0;
  let failed = false;
  req.on('data', (chunk: Buffer) => {
    if (failed) return;
    size += chunk.length;
    if (size > limit) {
      failed = true;
      chunks.length = 0;
      sendError(res, tooLarge(limit));
      return;
    }
    chunks.push(chunk);
  });
  req.on('end', () => {
    // headersSent: the request timed out (408) while the body was arriving.
    if (failed || res.headersSent) return;
    onBody(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size));
  });
  req.on('error', () => {
    failed = true;
  });
}
