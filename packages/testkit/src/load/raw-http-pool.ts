/**
 * A load's HTTP/1.1 client at a fraction of node:http's cost: keep-alive sockets that each carry
 * one request at a time, written as one string, and answers read for what a sign load needs (the
 * status, two headers, the body by its Content-Length). Past a service's knee the load sends
 * twice what the machine signs, on the same cores: node:http's client cost there was enough to
 * starve the services it measured (sign-load.ts).
 */
import { connect, type Socket } from 'node:net';

export interface RawAnswer {
  status: number;
  /** The answer's X-Request-Id and Retry-After, if any. */
  requestId: string | undefined;
  retryAfter: string | undefined;
  body: string;
}

interface Pending {
  head: string;
  body: string;
  resolve(answer: RawAnswer): void;
  reject(err: Error): void;
}

const HEAD_END = '\r\n\r\n';

/**
 * How long before the server's advertised keep-alive timeout (`Keep-Alive: timeout=5`, Node's
 * servers) a connection is no longer reused, and how long one without that header is: undici's
 * defaults (keepAliveTimeoutThreshold, keepAliveTimeout). A request written to a connection the
 * server is closing at that moment is lost unanswered: an overload drill once counted 34 such
 * errors in a round that reused connections left idle since the round before.
 */
const KEEP_ALIVE_THRESHOLD_MS = 2_000;
const DEFAULT_REUSE_MS = 4_000;

/** The headers read, in any case (Node writes the names as they were set). */
const HEADERS = {
  contentLength: /\r\ncontent-length: *([^\r]*)/i,
  requestId: /\r\nx-request-id: *([^\r]*)/i,
  retryAfter: /\r\nretry-after: *([^\r]*)/i,
  connectionClose: /\r\nconnection: *close/i,
  keepAliveTimeout: /\r\nkeep-alive: *[^\r]*timeout=(\d+)/i,
  chunked: /\r\ntransfer-encoding: *chunked/i,
};

/** A chunked body's bytes, once its last chunk is in (`text` from the body's start); undefined before. */
function unchunked(text: string): { body: string; length: number } | undefined {
  let at = 0;
  let body = '';
  for (;;) {
    const lineEnd = text.indexOf('\r\n', at);
    if (lineEnd < 0) return undefined;
    const size = parseInt(text.slice(at, lineEnd), 16);
    if (!Number.isInteger(size)) throw new Error('a malformed chunk');
    const from = lineEnd + 2;
    if (text.length < from + size + 2) return undefined;
    if (size === 0) return { body, length: from + 2 };
    body += text.slice(from, from + size);
    at = from + size + 2;
  }
}

class Connection {
  private readonly socket: Socket;
  private received = '';
  current?: Pending;
  closed = false;
  /** When its last answer was read (performance.now()), and how long after that it may carry another. */
  idleSince = 0;
  reusableForMs = DEFAULT_REUSE_MS;

  constructor(
    host: string,
    port: number,
    private readonly onFree: (c: Connection) => void,
    private readonly onClose: (c: Connection) => void,
  ) {
    this.socket = connect({ host, port, noDelay: true });
    this.socket.setEncoding('utf8');
    // A request unanswered this long (or a connection idle this long) is given up: its load ends.
    this.socket.setTimeout(10_000, () => this.socket.destroy());
    this.socket.on('data', (chunk: string) => this.read(chunk));
    // The error's code (ECONNREFUSED, ECONNRESET…) goes into the rejection 'close' gives.
    let failure = '';
    this.socket.on('error', (err: NodeJS.ErrnoException) => (failure = ` (${err.code ?? err.message})`));
    this.socket.on('close', () => {
      this.closed = true;
      const p = this.current;
      this.current = undefined;
      p?.reject(
        new Error(
          `${this.received ? 'connection closed in the middle of an answer' : 'connection closed with no answer'}${failure}`,
        ),
      );
      this.onClose(this);
    });
  }

  send(p: Pending): void {
    this.current = p;
    this.received = '';
    this.socket.write(p.head + p.body);
  }

  private read(chunk: string): void {
    this.received += chunk;
    const p = this.current;
    if (!p) return;
    const end = this.received.indexOf(HEAD_END);
    if (end < 0) return;
    const head = this.received.slice(0, end);
    const bodyFrom = end + HEAD_END.length;
    let whole: { body: string; length: number } | undefined;
    try {
      whole = this.bodyOf(head, this.received.slice(bodyFrom));
    } catch (err) {
      this.current = undefined;
      p.reject(err as Error);
      this.socket.destroy();
      return;
    }
    if (!whole) return;
    const answer: RawAnswer = {
      status: Number(head.slice(9, 12)),
      requestId: HEADERS.requestId.exec(head)?.[1],
      retryAfter: HEADERS.retryAfter.exec(head)?.[1],
      body: whole.body,
    };
    this.current = undefined;
    this.received = '';
    const keepAliveSeconds = HEADERS.keepAliveTimeout.exec(head)?.[1];
    this.reusableForMs =
      keepAliveSeconds === undefined ? DEFAULT_REUSE_MS : Number(keepAliveSeconds) * 1_000 - KEEP_ALIVE_THRESHOLD_MS;
    this.idleSince = performance.now();
    p.resolve(answer);
    if (HEADERS.connectionClose.test(head)) this.socket.destroy();
    else this.onFree(this);
  }

  /** The answer's body once all of it is in (`rest`: what came after the head); undefined before. */
  private bodyOf(head: string, rest: string): { body: string; length: number } | undefined {
    if (HEADERS.chunked.test(head)) return unchunked(rest);
    // Bodies here are ASCII JSON: characters are bytes.
    const length = Number(HEADERS.contentLength.exec(head)?.[1] ?? NaN);
    if (!Number.isInteger(length)) throw new Error(`an answer without its length: ${head.split('\r\n')[0]}`);
    return rest.length < length ? undefined : { body: rest.slice(0, length), length };
  }

  /** Idle past what the server lets it idle, less the threshold: closed, not reused. */
  stale(): boolean {
    return performance.now() - this.idleSince > this.reusableForMs;
  }

  destroy(): void {
    this.socket.destroy();
  }
}

/**
 * Keep-alive connections to one origin, at most `maxSockets`; a request waits for a free one past
 * them. An idle connection is reused only while the server still keeps it (KEEP_ALIVE_THRESHOLD_MS).
 */
export class RawHttpPool {
  private readonly idle: Connection[] = [];
  private readonly all = new Set<Connection>();
  private readonly waiting: Pending[] = [];
  private readonly host: string;
  private readonly port: number;

  constructor(
    url: string,
    private readonly maxSockets: number,
  ) {
    const u = new URL(url);
    this.host = u.hostname;
    this.port = Number(u.port || 80);
  }

  /** POSTs `body` to `path` with `headers` (content-length is added); resolves the answer, rejects when none came whole. */
  post(path: string, headers: Readonly<Record<string, string>>, body: string): Promise<RawAnswer> {
    let head = `POST ${path} HTTP/1.1\r\nhost: ${this.host}:${this.port}\r\n`;
    for (const name in headers) head += `${name}: ${headers[name]}\r\n`;
    head += `content-length: ${Buffer.byteLength(body)}\r\n\r\n`;
    return new Promise((resolve, reject) => this.dispatch({ head, body, resolve, reject }));
  }

  private dispatch(p: Pending): void {
    let c = this.idle.pop();
    while (c && (c.closed || c.stale())) {
      c.destroy();
      c = this.idle.pop();
    }
    if (!c && this.all.size < this.maxSockets) {
      c = new Connection(
        this.host,
        this.port,
        (free) => {
          const next = this.waiting.shift();
          if (next) free.send(next);
          else this.idle.push(free);
        },
        (gone) => {
          this.all.delete(gone);
          const next = this.waiting.shift();
          if (next) this.dispatch(next);
        },
      );
      this.all.add(c);
    }
    if (c) c.send(p);
    else this.waiting.push(p);
  }

  destroy(): void {
    for (const c of this.all) c.destroy();
    for (const p of this.waiting.splice(0)) p.reject(new Error('pool destroyed'));
  }
}
