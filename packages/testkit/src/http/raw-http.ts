/**
 * HTTP over a bare TCP socket, for tests of what Node's HTTP parser sees: write exactly the
 * given bytes (in steps, with pauses, to play a slow client), collect everything the server
 * sends until it closes the connection or the time runs out, and split that into responses.
 */
import net from 'node:net';

export interface RawStep {
  /** Bytes to write (strings are latin1: every char is one byte, NUL included). */
  data?: string | Buffer;
  /** Pause before the next step. */
  waitMs?: number;
  /** Wait for this before the next step (a point in the test, not a guess at its timing). */
  after?: Promise<unknown>;
}

export interface RawExchange {
  /** Everything the server sent. */
  received: Buffer;
  /** True when the server closed (or reset) the connection before `timeoutMs`. */
  closed: boolean;
  /** Milliseconds from the first write to the close (or to the give-up). */
  elapsedMs: number;
}

/**
 * Connects to 127.0.0.1:`port`, plays `steps` and waits for the server to close, at most
 * `timeoutMs` (then the socket is destroyed and `closed` is false). Writes after the server
 * has closed are skipped.
 */
export function rawExchange(
  port: number,
  steps: RawStep[] | string | Buffer,
  opts: {
    timeoutMs?: number;
    /** Half-close (send FIN) after the last step: "nothing more is coming". */ end?: boolean;
  } = {},
): Promise<RawExchange> {
  const plan: RawStep[] = Array.isArray(steps) ? steps : [{ data: steps }];
  const timeoutMs = opts.timeoutMs ?? 5_000;
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    let closed = false;
    let settled = false;
    const started = Date.now();
    const done = (isClosed: boolean) => {
      if (settled) return;
      settled = true;
      clearTimeout(giveUp);
      socket.destroy();
      resolve({ received: Buffer.concat(chunks), closed: isClosed, elapsedMs: Date.now() - started });
    };
    const giveUp = setTimeout(() => done(false), timeoutMs);
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('close', () => {
      closed = true;
      done(true);
    });
    socket.on('error', (err: NodeJS.ErrnoException) => {
      // A reset after the answer is a close; before connecting it is a failure of the test.
      if (err.code === 'ECONNREFUSED') {
        settled = true;
        clearTimeout(giveUp);
        reject(err);
      }
    });
    socket.once('connect', async () => {
      for (const step of plan) {
        if (closed) break;
        if (step.data !== undefined && socket.writable)
          socket.write(typeof step.data === 'string' ? Buffer.from(step.data, 'latin1') : step.data);
        if (step.waitMs) await new Promise((r) => setTimeout(r, step.waitMs));
        if (step.after) await step.after;
      }
      if (opts.end && !closed) socket.end();
    });
  });
}

export interface RawResponse {
  status: number;
  /** Lower-case names; the last value of a repeated header. */
  headers: Record<string, string>;
  body: Buffer;
}

function decodeChunked(data: Buffer): { body: Buffer; used: number } | undefined {
  const parts: Buffer[] = [];
  let at = 0;
  for (;;) {
    const eol = data.indexOf('\r\n', at);
    if (eol === -1) return undefined;
    const size = parseInt(data.subarray(at, eol).toString('latin1'), 16);
    if (!Number.isFinite(size)) return undefined;
    at = eol + 2;
    if (size === 0) {
      const end = data.indexOf('\r\n', at);
      return end === -1 ? undefined : { body: Buffer.concat(parts), used: end + 2 };
    }
    if (data.length < at + size + 2) return undefined;
    parts.push(data.subarray(at, at + size));
    at += size + 2;
  }
}

/**
 * The complete responses in `data`, in order (HEAD answers have no body: pass the methods to
 * skip theirs). Throws on bytes that are not a well-formed response; an incomplete tail is
 * returned in `rest`.
 */
export function parseRawResponses(
  data: Buffer,
  headMethods: boolean[] = [],
): { responses: RawResponse[]; rest: Buffer } {
  const responses: RawResponse[] = [];
  let buf = data;
  while (buf.length > 0) {
    const end = buf.indexOf('\r\n\r\n');
    if (end === -1) break;
    const lines = buf.subarray(0, end).toString('latin1').split('\r\n');
    const m = /^HTTP\/1\.[01] (\d{3}) /.exec(`${lines[0]} `);
    if (!m) throw new Error(`not an HTTP response: ${JSON.stringify(lines[0])}`);
    const headers: Record<string, string> = {};
    for (const line of lines.slice(1)) {
      const colon = line.indexOf(':');
      headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
    }
    const status = Number(m[1]);
    let rest = buf.subarray(end + 4);
    let body: Buffer;
    const noBody = headMethods[responses.length] === true || status === 204 || status === 304 || status < 200;
    if (noBody) body = Buffer.alloc(0);
    else if (headers['transfer-encoding'] === 'chunked') {
      const decoded = decodeChunked(rest);
      if (!decoded) break;
      body = decoded.body;
      rest = rest.subarray(decoded.used);
    } else if (headers['content-length'] !== undefined) {
      const n = Number(headers['content-length']);
      if (rest.length < n) break;
      body = rest.subarray(0, n);
      rest = rest.subarray(n);
    } else {
      body = rest;
      rest = Buffer.alloc(0);
    }
    responses.push({ status, headers, body });
    buf = rest;
  }
  return { responses, rest: buf };
}
