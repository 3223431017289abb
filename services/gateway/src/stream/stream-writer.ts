/**
 * Writes shared, prebuilt bytes to a long-lived streaming response with one socket write each.
 *
 * Why not `res.write()`: for a chunked response, node's ServerResponse turns every write into
 * four socket writes (the size as a hex string, CRLF, the bytes, CRLF), corks the socket and
 * uncorks it on the next tick, where the four pieces (one of them a string to encode) go out
 * as one writev. With 1,000 price streams (`npm run bench stream`) nothing left the gateway
 * until the loop had queued every stream's pieces (the first subscriber got a book about 7 ms
 * after its write in Redis, 2 ms now), and a book cost about 16 ms of gateway CPU (13 ms now,
 * most of it the kernel's sends). Here a payload is framed as an HTTP/1.1 chunk once (a
 * {@link StreamPayload} is shared by every stream) and handed to each socket as one Buffer,
 * which node writes to the kernel at once.
 *
 * The bytes on the wire are the same as `res.write()`'s. The response keeps owning the
 * connection: its headers were flushed before the first payload, and `res.end()` still writes
 * the last chunk after ours. A response that does not own its socket yet (a request
 * pipelined behind another) is written through `res.write()`, as is any response written
 * before its headers are out.
 */
import type { ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

const CRLF = Buffer.from('\r\n', 'latin1');

/** Bytes to send to many streams, with their HTTP/1.1 chunk framing built on first use. */
export class StreamPayload {
  private framed?: Buffer;

  constructor(readonly bytes: Buffer) {}

  /** The bytes as one chunk of a `Transfer-Encoding: chunked` body. */
  get chunk(): Buffer {
    return (this.framed ??= Buffer.concat([
      Buffer.from(`${this.bytes.length.toString(16)}\r\n`, 'latin1'),
      this.bytes,
      CRLF,
    ]));
  }
}

export interface StreamWriter {
  /** Writes the payload; false when the connection's buffer is full (wait for {@link onceDrain}). */
  write(payload: StreamPayload): boolean;
  /** Calls `listener` once the buffer has room again. */
  onceDrain(listener: () => void): void;
}

/** The writer of a response whose headers are already sent (see the module comment). */
export function streamWriter(res: ServerResponse): StreamWriter {
  const socket: Socket | null = res.headersSent ? res.socket : null;
  if (!socket) {
    return {
      write: (payload) => res.write(payload.bytes),
      onceDrain: (listener) => void res.once('drain', listener),
    };
  }
  // An HTTP/1.0 client gets a body delimited by the connection's close, without chunks.
  const chunked = res.chunkedEncoding;
  return {
    write: (payload) => socket.write(chunked ? payload.chunk : payload.bytes),
    onceDrain: (listener) => void socket.once('drain', listener),
  };
}
