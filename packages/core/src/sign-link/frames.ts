/**
 * The sign link's framing (sign-link/README.md): every message, either way, is one frame
 *
 *   u32 size of the rest · u32 exchange id · u32 head size · head (JSON, UTF-8) · body bytes
 *
 * all integers big-endian. The exchange id pairs an answer with its request, so many requests
 * share one connection and their answers may come back in any order. The head is small JSON
 * (path and headers one way, status and headers the other); the body is carried as bytes,
 * never re-encoded, so the signer reads exactly what the client sent.
 */

/** Bytes before the head: size, id, head size. */
const PREFIX_BYTES = 12;
/** The size field counts everything after itself. */
const SIZE_FIELD_BYTES = 4;

export interface Frame {
  id: number;
  /** The head's JSON text. */
  head: string;
  body: Buffer;
}

/** A frame that breaks the format or the size limit: the connection cannot be trusted further. */
export class FrameError extends Error {}

/** One frame's bytes (a new buffer; the body is copied once). */
export function encodeFrame(id: number, head: string, body: Buffer): Buffer {
  const headBytes = Buffer.byteLength(head);
  const frame = Buffer.allocUnsafe(PREFIX_BYTES + headBytes + body.length);
  frame.writeUInt32BE(frame.length - SIZE_FIELD_BYTES, 0);
  frame.writeUInt32BE(id, 4);
  frame.writeUInt32BE(headBytes, 8);
  frame.write(head, PREFIX_BYTES, 'utf8');
  body.copy(frame, PREFIX_BYTES + headBytes);
  return frame;
}

/**
 * Cuts a byte stream into frames. TCP delivers chunks that may hold several frames or part
 * of one; `push` returns the frames completed by a chunk, in order, and keeps the rest.
 * A frame larger than `maxFrameBytes` (or one whose head overruns it) throws FrameError
 * before its bytes are buffered, so a hostile peer cannot make the reader hold much.
 */
export class FrameReader {
  private pending: Buffer = Buffer.alloc(0);

  constructor(private readonly maxFrameBytes: number) {}

  push(chunk: Buffer): Frame[] {
    let data = this.pending.length === 0 ? chunk : Buffer.concat([this.pending, chunk]);
    const frames: Frame[] = [];
    while (data.length >= SIZE_FIELD_BYTES) {
      const size = data.readUInt32BE(0);
      if (size < PREFIX_BYTES - SIZE_FIELD_BYTES || size > this.maxFrameBytes)
        throw new FrameError(`frame of ${size} bytes (limit ${this.maxFrameBytes})`);
      const end = SIZE_FIELD_BYTES + size;
      if (data.length < end) break;
      const headBytes = data.readUInt32BE(8);
      if (PREFIX_BYTES + headBytes > end) throw new FrameError(`head of ${headBytes} bytes overruns its frame`);
      frames.push({
        id: data.readUInt32BE(4),
        head: data.toString('utf8', PREFIX_BYTES, PREFIX_BYTES + headBytes),
        body: data.subarray(PREFIX_BYTES + headBytes, end),
      });
      data = data.subarray(end);
    }
    // Copied: a slice would keep the whole chunk it came from alive.
    this.pending = data.length === 0 ? Buffer.alloc(0) : Buffer.from(data);
    return frames;
  }
}
