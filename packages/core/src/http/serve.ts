/**
 * Starts an HTTP server and drains it on SIGTERM/SIGINT: stop accepting, let in-flight
 * requests finish (up to `drainTimeoutMs`) and end each keep-alive connection after its next
 * answer, close the app's resources, exit.
 *
 * Every server answers what Node's parser rejects in the error envelope (client-errors.ts)
 * and enforces its timeouts when they fall due: Node checks the headers and request timeouts
 * only every `connectionsCheckingInterval` (30 s by default, so a 15 s headers timeout cut
 * slow clients after 30 to 45 s); here the interval is a tenth of the headers timeout, at most 1 s.
 *
 * The rest of a body answered before it was read is read and thrown away up to a bound, and a
 * connection closed after such an answer closes lingering (lingering-close.ts), so that the
 * answer is not lost in a reset.
 */
import { createServer, type IncomingMessage, type RequestListener, type Server } from 'node:http';
import type { Socket } from 'node:net';
import type { Logger } from '../service/logger';
import { ApiError } from '@pmm/protocol';
import { answerAndCloseResponse, answerClientErrors } from './client-errors';
import { lingerOnClose, readRestOfBody } from './lingering-close';
import { requestIdOf } from './request-context';

export interface Served {
  server: Server;
  port: number;
  /** Drains and closes; idempotent. */
  close(): Promise<void>;
}

/** Node's limits on reading requests and keeping idle connections. */
export interface HttpTimeouts {
  /** All request headers must arrive within this (from the first byte of the request): else 408. */
  headersMs: number;
  /** The whole request (headers and body) must arrive within this: else 408. */
  requestMs: number;
  /** An idle keep-alive connection is closed after this. */
  keepAliveMs: number;
}

/** During a drain, how long a connection may idle after an answer before it is closed (Node adds 1 s). */
const DRAIN_KEEP_ALIVE_MS = 100;

export const DEFAULT_HTTP_TIMEOUTS: HttpTimeouts = { headersMs: 10_000, requestMs: 15_000, keepAliveMs: 5_000 };

export interface ListenOptions {
  /** Errors after binding (default: ignored, the server keeps serving). */
  onError?: (err: Error) => void;
  timeouts?: Partial<HttpTimeouts>;
  /** Receives a debug line per request answered by client-errors.ts. */
  logger?: Logger;
}

/** True when a body follows the request's head. */
const hasBody = (req: IncomingMessage) =>
  req.headers['transfer-encoding'] !== undefined ||
  (req.headers['content-length'] !== undefined && req.headers['content-length'] !== '0');

/** How often Node looks for requests past their headers or request timeout. */
export function checkingIntervalMs(t: HttpTimeouts): number {
  return Math.max(10, Math.min(1_000, Math.floor(Math.min(t.headersMs, t.requestMs) / 10)));
}

/**
 * Serves `handler` (an Express app, or a plain node:http listener on hot paths) on
 * `port`/`host` (port 0: any free port) and resolves once bound. The fourth argument is the
 * options, or (older form) the `onError` callback alone.
 */
export function listen(
  handler: RequestListener,
  port: number,
  host: string,
  options: ListenOptions | ((err: Error) => void) = {},
): Promise<Served> {
  const opts: ListenOptions = typeof options === 'function' ? { onError: options } : options;
  const onError = opts.onError ?? (() => undefined);
  const timeouts: HttpTimeouts = { ...DEFAULT_HTTP_TIMEOUTS, ...opts.timeouts };
  // close() waits for every connection to end, and Node closes only the connections idle at that
  // moment. During the drain:
  // - the first request read on a connection is its last: its answer says `Connection: close` (a
  //   keep-alive client that kept sending held the drain open for ever). Node reads and hands over
  //   requests pipelined behind it too, though their answers could never be sent: they are not
  //   handled, so a client may send them again elsewhere (nothing was signed for them);
  // - a connection idle after an answer begun before the drain closes after DRAIN_KEEP_ALIVE_MS
  //   (plus Node's 1 s margin), not after the keep-alive timeout: Node's own idle timer, which
  //   waits for the answers of requests pipelined before the drain.
  let draining = false;
  const lastRequestRead = new WeakSet<Socket>();
  /** The request each connection read last: the one whose body may still be arriving at a close. */
  const lastRequest = new WeakMap<Socket, IncomingMessage>();
  // HTTP/1.1 requires Host (RFC 9112 3.2). Node's own check answers an empty 400; this one
  // answers in the envelope.
  const withHost: RequestListener = (req, res) => {
    // Read behind a request whose answer closed the connection (lingering): never answerable.
    if (req.socket.writableEnded) return;
    lastRequest.set(req.socket, req);
    if (hasBody(req)) res.once('prefinish', () => readRestOfBody(req));
    if (draining) {
      if (lastRequestRead.has(req.socket)) return;
      lastRequestRead.add(req.socket);
      res.setHeader('Connection', 'close');
    }
    if (req.headers.host === undefined && req.httpVersion === '1.1') {
      answerAndCloseResponse(res, new ApiError('MALFORMED_REQUEST', 'Host: header required'), requestIdOf(req));
      return;
    }
    handler(req, res);
  };
  return new Promise((resolve, reject) => {
    const server = createServer(
      {
        requireHostHeader: false,
        headersTimeout: timeouts.headersMs,
        requestTimeout: timeouts.requestMs,
        keepAliveTimeout: timeouts.keepAliveMs,
        connectionsCheckingInterval: checkingIntervalMs(timeouts),
      },
      withHost,
    );
    answerClientErrors(server, opts.logger);
    server.on('connection', (socket: Socket) => lingerOnClose(socket, () => lastRequest.get(socket)));
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      server.on('error', onError);
      const address = server.address();
      let closing: Promise<void> | undefined;
      resolve({
        server,
        port: typeof address === 'object' && address ? address.port : port,
        close: () =>
          (closing ??= new Promise<void>((done) => {
            draining = true;
            server.keepAliveTimeout = DRAIN_KEEP_ALIVE_MS;
            server.close(() => done());
            server.closeIdleConnections();
          })),
      });
    });
  });
}

/**
 * Installs the signal handlers of a service's main: on the first SIGTERM/SIGINT, drain the
 * server, then run `cleanup` (close Redis, workers, providers), then exit 0; a second signal
 * or the drain timeout forces the exit.
 */
export function shutdownOnSignals(opts: {
  served: Served[];
  cleanup: () => Promise<void>;
  logger: Logger;
  drainTimeoutMs?: number;
}): void {
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) process.exit(1);
    stopping = true;
    opts.logger.info('shutting down', { signal });
    const force = setTimeout(() => {
      opts.logger.warn('drain timeout: closing open connections');
      for (const s of opts.served) s.server.closeAllConnections();
    }, opts.drainTimeoutMs ?? 10_000);
    force.unref();
    try {
      await Promise.all(opts.served.map((s) => s.close()));
      await opts.cleanup();
    } catch (err) {
      opts.logger.error('shutdown error', { error: err });
    }
    opts.logger.info('stopped');
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
}
