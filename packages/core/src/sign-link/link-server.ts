/**
 * The signer's end of the sign link: takes `GET /internal/sign-link` with
 * `Upgrade: pmm-sign-link/1` on the signer's own HTTP server (same port, same TLS, same
 * internal token), then answers the frames that arrive on that connection.
 *
 * Why a link and not one HTTP request per quote: measured with `npm run bench gateway`, a
 * keep-alive HTTP hop cost the two processes about 100 µs of CPU per request, most of it in
 * Node's HTTP client and one write syscall per message; the link costs a few µs, because its
 * answers are written together once per turn of the event loop (see `flushSoon`).
 *
 * The connection is trusted once its upgrade request carried the internal token; a frame that
 * breaks the format or the size limit closes it (the gateway reconnects on its next request).
 */
import type { IncomingMessage, Server } from 'node:http';
import type { Socket } from 'node:net';
import { ApiError, toErrorEnvelope } from '@pmm/protocol';
import type { Logger } from '../logger';
import { answerAndClose, rawErrorResponse } from '../http/client-errors';
import { requestIdOf } from '../http/request-context';
import { FrameError, FrameReader, encodeFrame } from './frames';
import {
  SIGN_LINK_PATH,
  SIGN_LINK_PROTOCOL,
  type LinkAnswer,
  type LinkRequest,
  type LinkRequestHead,
} from './link-protocol';

export interface SignLinkServerOptions {
  /** Throws an ApiError (answered over HTTP, then the socket is closed) when the upgrade is not allowed. */
  authorize(headers: IncomingMessage['headers']): void;
  /** Answers one request. Should not reject; if it does, the answer is a 500 envelope. */
  handle(request: LinkRequest): Promise<LinkAnswer> | LinkAnswer;
  /** The largest request body the handler accepts; a frame may carry this plus its head. */
  maxBodyBytes: number;
  logger: Logger;
}

export interface SignLinkServer {
  /** Links currently open. */
  readonly open: number;
  /** Lets in-flight requests finish and their answers go out, then ends every link. */
  close(): Promise<void>;
}

/** Room for a request head (path and a few headers) on top of the body limit. */
const HEAD_ALLOWANCE_BYTES = 16 * 1024;
/** TCP keep-alive probes: a gateway that vanished without closing is noticed. */
const KEEPALIVE_MS = 30_000;
/** Answers not yet taken by the kernel beyond which the signer stops reading that link's requests. */
const UNSENT_LIMIT_BYTES = 1024 * 1024;
/** How long a link the signer ended while draining may stay open before it is destroyed. */
const END_GRACE_MS = 2_000;

/** An error as a link answer: the envelope and its headers (Retry-After on a 503). */
function envelopeAnswer(err: ApiError, requestId: string): LinkAnswer {
  const { status, body, headers } = toErrorEnvelope(err, requestId);
  return {
    status,
    headers: { ...headers, 'Content-Type': 'application/json; charset=utf-8' },
    body: Buffer.from(JSON.stringify(body)),
  };
}

function parseHead(text: string): LinkRequestHead {
  const head = JSON.parse(text) as Partial<LinkRequestHead> | null;
  if (
    typeof head !== 'object' ||
    head === null ||
    typeof head.path !== 'string' ||
    typeof head.headers !== 'object' ||
    head.headers === null ||
    !Object.values(head.headers).every((v) => typeof v === 'string')
  )
    throw new FrameError('request head is not {path, headers}');
  return head as LinkRequestHead;
}

/** Serves the link on `server` (an 'upgrade' listener); other upgrade requests get 404 or 400. */
export function serveSignLink(server: Server, opts: SignLinkServerOptions): SignLinkServer {
  const maxFrameBytes = opts.maxBodyBytes + HEAD_ALLOWANCE_BYTES;
  const links = new Set<Socket>();
  let closing = false;
  let inFlightTotal = 0;
  const drained = new Set<() => void>();

  const settleDrain = () => {
    if (!closing || inFlightTotal > 0) return;
    for (const link of links) {
      link.end();
      // node:http's closeAllConnections (the drain timeout) does not reach upgraded sockets: a
      // gateway that never closes its side (gone without a FIN, or stuck) would hold the server's
      // close for ever. A live one closes within a round trip of the end.
      setTimeout(() => link.destroy(), END_GRACE_MS).unref();
    }
    for (const done of drained) done();
    drained.clear();
  };

  server.on('upgrade', (req: IncomingMessage, socket: Socket, head: Buffer) => {
    const requestId = requestIdOf(req);
    // Refused upgrades get the envelope over HTTP, as Node's parser errors do, then the socket closes.
    const refuse = (err: ApiError) => answerAndClose(socket, rawErrorResponse(err, requestId));
    socket.on('error', () => socket.destroy());
    if (req.url !== SIGN_LINK_PATH) return refuse(new ApiError('NOT_FOUND', `no route for ${req.url}`));
    if (req.headers.upgrade?.toLowerCase() !== SIGN_LINK_PROTOCOL)
      return refuse(new ApiError('MALFORMED_REQUEST', `Upgrade: only ${SIGN_LINK_PROTOCOL}`));
    if (closing) return refuse(new ApiError('SERVICE_UNAVAILABLE', 'shutting down'));
    try {
      opts.authorize(req.headers);
    } catch (err) {
      opts.logger.warn('sign link refused', { code: err instanceof ApiError ? err.code : 'INTERNAL_ERROR' });
      return refuse(err instanceof ApiError ? err : new ApiError('INTERNAL_ERROR', 'internal error'));
    }
    socket.setNoDelay(true);
    socket.setKeepAlive(true, KEEPALIVE_MS);
    socket.write(`HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: ${SIGN_LINK_PROTOCOL}\r\n\r\n`);
    links.add(socket);
    // node:http servers allow half-open sockets: a gateway that ended its side is gone for good.
    socket.once('end', () => socket.destroy());
    socket.once('close', () => {
      links.delete(socket);
      settleDrain();
    });
    opts.logger.info('sign link open', { links: links.size });

    const reader = new FrameReader(maxFrameBytes);
    let out: Buffer[] = [];
    let flushScheduled = false;
    const flush = () => {
      flushScheduled = false;
      if (socket.destroyed) return void (out = []);
      const frames = out;
      out = [];
      // A gateway that does not read its answers: read no more requests until it has, or
      // their answers would pile up here without bound. Only past UNSENT_LIMIT_BYTES: one
      // turn's answers often exceed the socket's 16 KiB mark while the kernel takes them at once.
      const accepted = socket.write(frames.length === 1 ? frames[0]! : Buffer.concat(frames));
      if (!accepted && socket.writableLength > UNSENT_LIMIT_BYTES && !socket.isPaused()) {
        socket.pause();
        socket.once('drain', () => socket.resume());
      }
    };
    // Answers that complete in the same turn of the event loop leave in one write.
    const flushSoon = () => {
      if (flushScheduled) return;
      flushScheduled = true;
      setImmediate(flush);
    };
    const send = (id: number, answer: LinkAnswer) => {
      out.push(encodeFrame(id, JSON.stringify({ status: answer.status, headers: answer.headers }), answer.body));
      flushSoon();
    };
    const answerOne = (id: number, request: LinkRequest) => {
      if (closing) {
        // Draining: what is in flight finishes, nothing new starts (the gateway's client retries).
        send(
          id,
          envelopeAnswer(
            new ApiError('SERVICE_UNAVAILABLE', 'signer shutting down; retry shortly'),
            requestIdOf(request),
          ),
        );
        return;
      }
      inFlightTotal++;
      const done = (answer: LinkAnswer) => {
        inFlightTotal--;
        send(id, answer);
        if (closing) setImmediate(settleDrain);
      };
      const failed = (err: unknown) => {
        opts.logger.error('sign link handler failed', { error: err });
        done(envelopeAnswer(new ApiError('INTERNAL_ERROR', 'internal error'), requestIdOf(request)));
      };
      try {
        const answer = opts.handle(request);
        if (answer instanceof Promise) answer.then(done, failed);
        else done(answer);
      } catch (err) {
        failed(err);
      }
    };
    const onData = (chunk: Buffer) => {
      try {
        for (const frame of reader.push(chunk)) answerOne(frame.id, { ...parseHead(frame.head), body: frame.body });
      } catch (err) {
        // FrameError or a head that is not JSON: the peer does not speak the link.
        opts.logger.warn('sign link closed: malformed frame', {
          error: err instanceof Error ? err.message : String(err),
        });
        socket.destroy();
      }
    };
    socket.on('data', onData);
    if (head.length > 0) onData(head);
  });

  return {
    get open() {
      return links.size;
    },
    close: () => {
      closing = true;
      return new Promise<void>((resolve) => {
        if (links.size === 0 && inFlightTotal === 0) return resolve();
        drained.add(resolve);
        // After the answers already queued for this turn have been written.
        setImmediate(settleDrain);
      });
    },
  };
}
