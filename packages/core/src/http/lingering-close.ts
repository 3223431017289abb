/**
 * What happens to the rest of a request's body when the answer comes before it was read (413 by
 * `Content-Length`, 401, 429, a 408, an `Expect` refused), for every server listen() starts:
 *
 * - **The rest is read and thrown away, up to LINGER_MAX_BYTES** (readRestOfBody): so that a
 *   keep-alive connection can carry the next request, and so that the kernel has nothing unread
 *   when the connection closes. Past the bound the client has sent far more than a refused
 *   request deserves: the connection is closed.
 * - **A connection that closes after such an answer closes lingering** (nginx's
 *   `lingering_close`; lingerOnClose): the answer says `Connection: close` (the client asked
 *   for it or spoke HTTP/1.0, a drain, a 408) while the client is still sending. Closed at once,
 *   the socket has unread bytes and the kernel answers them with a reset: the client's next
 *   write fails (EPIPE) and the answer, already sent, is discarded with the reset before the
 *   client reads it. Instead the answer goes out with a FIN (the client reads it, then the end),
 *   the rest of the body is read as above, and the connection is closed when the body has
 *   ended, or past the bound, or after LINGER_MAX_MS.
 */
import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';

/** Bytes of a body read and thrown away after its answer; past them the connection is closed. */
export const LINGER_MAX_BYTES = 1024 * 1024;
/** How long a connection closing after an answer may take to finish sending its body, ms. */
export const LINGER_MAX_MS = 5_000;

/**
 * Call when the answer to `req` is about to finish ('prefinish'): if its body is still arriving,
 * it is read and thrown away from now on (Node would otherwise dump it without a bound), at most
 * LINGER_MAX_BYTES.
 */
export function readRestOfBody(req: IncomingMessage): void {
  if (req.complete || req.destroyed) return;
  let read = 0;
  req.on('data', (chunk: Buffer) => {
    read += chunk.length;
    if (read > LINGER_MAX_BYTES) req.socket.destroy();
  });
  req.resume();
}

/**
 * Makes Node's close of `socket` after an answer (its `destroySoon`) linger while the body of
 * the request `currentRequest()` returns is still arriving (read by readRestOfBody).
 */
export function lingerOnClose(socket: Socket, currentRequest: () => IncomingMessage | undefined): void {
  const closeNow = socket.destroySoon.bind(socket);
  socket.destroySoon = () => {
    const req = currentRequest();
    if (!req || req.complete || req.destroyed) return closeNow();
    // The answer, then the FIN: the client sees both whatever it still writes.
    socket.end();
    const close = () => {
      clearTimeout(timer);
      socket.destroy();
    };
    const timer = setTimeout(close, LINGER_MAX_MS);
    socket.once('close', () => clearTimeout(timer));
    // The whole body read: nothing unread is left, the close resets nothing once the answer is out.
    req.once('end', () => (socket.writableFinished ? close() : socket.once('finish', close)));
  };
}
