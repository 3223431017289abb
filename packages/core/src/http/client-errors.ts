/**
 * The answers to what never reaches an app: requests Node's HTTP parser rejects
 * (`clientError`: bad request line, invalid header, conflicting Content-Length, headers over
 * the limit, headers or body not received in time), `CONNECT` (`connect`) and an `Expect`
 * other than `100-continue` (`checkExpectation`). Without these listeners Node answers with an
 * empty body and no request id, or closes the socket without a word; with them every answer
 * that can still be written is the error envelope with `X-Request-Id`, and the connection
 * is closed after it (the parser's state is unknown after an error).
 */
import { randomUUID } from 'node:crypto';
import { STATUS_CODES, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { ApiError, toErrorEnvelope } from '@pmm/protocol';
import type { Logger } from '../service/logger';
import { requestIdOf } from './request-context';

/** The error of a parser failure, by Node's error code (the statuses Node itself would use). */
export function clientErrorOf(code: string | undefined): ApiError {
  switch (code) {
    case 'HPE_HEADER_OVERFLOW':
      return new ApiError('HEADERS_TOO_LARGE', 'request headers larger than the server accepts');
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return new ApiError('PAYLOAD_TOO_LARGE', 'body: chunk extensions larger than the server accepts');
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return new ApiError('REQUEST_TIMEOUT', 'request headers or body not received in time');
    default:
      // Node's parser codes (HPE_INVALID_METHOD, HPE_UNEXPECTED_CONTENT_LENGTH, ...) say what
      // was wrong and are not client text; anything else is not named.
      return new ApiError(
        'MALFORMED_REQUEST',
        code && /^HPE_[A-Z_]{1,40}$/.test(code) ? `malformed HTTP request (${code})` : 'malformed HTTP request',
      );
  }
}

/** Status, headers and body text of an envelope answer after which the connection is closed. */
function closingAnswer(err: ApiError, requestId: string) {
  const { status, body, headers } = toErrorEnvelope(err, requestId);
  const text = JSON.stringify(body);
  return {
    status,
    text,
    headers: {
      ...headers,
      'Content-Type': 'application/json; charset=utf-8',
      'Content-Length': String(Buffer.byteLength(text)),
      'X-Request-Id': requestId,
      'Cache-Control': 'no-store',
      Connection: 'close',
    },
  };
}

/** The bytes of a complete error response that closes the connection. */
export function rawErrorResponse(err: ApiError, requestId: string): Buffer {
  const { status, text, headers } = closingAnswer(err, requestId);
  const lines = [
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Error'}`,
    ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`),
  ];
  return Buffer.from(`${lines.join('\r\n')}\r\n\r\n${text}`, 'utf8');
}

/** Writes `bytes` and closes; the socket is destroyed once flushed, or after 1 s at the latest. */
export function answerAndClose(socket: Duplex, bytes: Buffer): void {
  const force = setTimeout(() => socket.destroy(), 1_000);
  force.unref();
  socket.end(bytes, () => {
    clearTimeout(force);
    socket.destroy();
  });
}

/** The response in flight on this socket, if any (Node's own test before it writes an error). */
function inFlight(socket: Duplex): ServerResponse | undefined {
  const current = (socket as { _httpMessage?: ServerResponse | null })._httpMessage;
  return current && !current.writableFinished ? current : undefined;
}

/**
 * Installs the three listeners on `server`. `log` receives one debug line per answer (a
 * hostile client must not be able to flood the logs at info).
 */
export function answerClientErrors(server: Server, logger?: Logger): void {
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => {
    // A reset or a closed socket cannot be answered.
    if (err.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy();
      return;
    }
    const apiError = clientErrorOf(err.code);
    const requestId = randomUUID();
    logger?.debug('client error', { code: apiError.code, parser: err.code, requestId });
    const answer = () => answerAndClose(socket, rawErrorResponse(apiError, requestId));
    // Pipelined requests: the answer to an earlier request may be under way; ours follows it.
    // A request that timed out has no answer yet: it cannot get one any more, ours replaces it.
    const current = inFlight(socket);
    if (current && current.headersSent) {
      const force = setTimeout(() => socket.destroy(), 10_000);
      force.unref();
      current.once('finish', () => {
        clearTimeout(force);
        answer();
      });
      current.once('close', () => clearTimeout(force));
    } else answer();
  });
  server.on('connect', (req: IncomingMessage, socket: Duplex) => {
    const requestId = requestIdOf(req);
    answerAndClose(
      socket,
      rawErrorResponse(new ApiError('METHOD_NOT_ALLOWED', 'CONNECT is not allowed here'), requestId),
    );
  });
  server.on('checkExpectation', (req: IncomingMessage, res: ServerResponse) => {
    // The body the client meant to send may follow: closing, we do not read it as a request.
    answerAndCloseResponse(
      res,
      new ApiError('EXPECTATION_FAILED', 'Expect: only 100-continue is supported'),
      requestIdOf(req),
    );
  });
}

/** Answers a request the app never sees with the envelope, and closes the connection after it. */
export function answerAndCloseResponse(res: ServerResponse, err: ApiError, requestId: string): void {
  const { status, text, headers } = closingAnswer(err, requestId);
  res.shouldKeepAlive = false;
  res.writeHead(status, headers);
  res.end(text);
}
