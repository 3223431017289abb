/**
 * A sign request → the signer: the gateway's one way to it, http-proxy-middleware over a
 * keep-alive agent (docs/decisions.md#gateway-to-signer-one-http-hop). sign-route.ts runs the
 * public steps first and leaves the request's key and body bytes in its `res.locals`.
 *
 * - The body forwarded is exactly the bytes the route read (never parsed here).
 * - Headers: the client's, less its `X-API-KEY` and the hop-by-hop headers (RFC 9110 §7.6.1:
 *   `Connection` and the headers it names, `Keep-Alive`, `TE`, `Trailer`, `Transfer-Encoding`,
 *   `Upgrade`, `Proxy-*`: a client must not steer the gateway's connections to the signer),
 *   plus `X-Internal-Token`, `X-Request-Id`, `X-Integrator-Id` and `X-Api-Key-Id`
 *   (signer-headers.ts); the client's own values of those are replaced.
 * - The signer's answer (status, end-to-end headers, body) is passed through, except a 401
 *   carrying the internal-token challenge (protocol INTERNAL_TOKEN_SCHEME): the signer refused
 *   the GATEWAY (another INTERNAL_TOKEN), so the client gets 503 and the operator an error log
 *   and `gateway_upstream_errors_total{reason="TOKEN_REFUSED"}`.
 * - The signer down, refusing, resetting or too slow → 503 SERVICE_UNAVAILABLE in the
 *   envelope (never http-proxy's default 504 text page). The request timeout
 *   (request-frame.ts) answers first when the signer accepts but does not answer; it then
 *   aborts the upstream request.
 */
import { Agent, type ClientRequest, type IncomingMessage, type OutgoingHttpHeaders } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import type { Socket } from 'node:net';
import type { ServerResponse } from 'node:http';
import { createProxyMiddleware } from 'http-proxy-middleware';
import { API_KEY_HEADER, ApiError, INTERNAL_TOKEN_SCHEME } from '@pmm/protocol';
import { sendError, type Logger } from '@pmm/core';
import type { RequestLocals } from './request-frame';
import { signerRequestHeaders } from './signer-headers';
import { dropHopByHop, hopByHop } from './hop-by-hop';

export interface SignProxyOptions {
  signerUrl: string;
  internalToken: string;
  timeoutMs: number;
  /** Keep-alive pool to the signer (see signerAgent). */
  agent: Agent | HttpsAgent;
  logger: Logger;
  /** Called with a short reason on every upstream failure (metrics). */
  onUpstreamError?: (reason: string) => void;
}

function isResponse(x: ServerResponse | Socket): x is ServerResponse {
  return typeof (x as ServerResponse).writeHead === 'function';
}

const localsOf = (res: ServerResponse) => (res as ServerResponse & { locals: RequestLocals }).locals;

/** An idle pooled socket is dropped after this unless the signer announces less (Keep-Alive: timeout=…). */
const IDLE_SOCKET_MS = 60_000;

/** The connection pool of the proxy to the signer. */
export function signerAgent(signerUrl: string): Agent | HttpsAgent {
  // Keep-alive: a TCP handshake per sign request would cost more than signing. The timeout
  // matters: without one, Node's agent ignores the signer's Keep-Alive hint and reuses sockets
  // the signer is about to close (an ECONNRESET, so a 503, on the next request).
  // noDelay: a request written in two segments (head, then body) must not wait for the
  // signer's delayed ACK (Nagle's algorithm): up to 40 ms on Linux, seen as the sign path's p99.
  const options = { keepAlive: true, maxSockets: 512, timeout: IDLE_SOCKET_MS, noDelay: true };
  return signerUrl.startsWith('https:') ? new HttpsAgent(options) : new Agent(options);
}

/** The signer's answer headers a client gets: the end-to-end ones (Node frames the body itself). */
function endToEnd(proxyRes: IncomingMessage): OutgoingHttpHeaders {
  const isHop = hopByHop(proxyRes.headers);
  const headers: OutgoingHttpHeaders = {};
  for (const name in proxyRes.headers) if (!isHop(name)) headers[name] = proxyRes.headers[name];
  return headers;
}

/** The forwarder of sign-route.ts (the upstream path is the route's, without the query). */
export function signProxy(opts: SignProxyOptions): (req: IncomingMessage, res: ServerResponse) => void {
  const { agent, logger } = opts;
  const proxy = createProxyMiddleware<IncomingMessage, ServerResponse>({
    target: opts.signerUrl,
    changeOrigin: true,
    xfwd: false,
    agent,
    proxyTimeout: opts.timeoutMs,
    selfHandleResponse: true,
    on: {
      proxyReq: (proxyReq: ClientRequest, _req: IncomingMessage, res: ServerResponse) => {
        const locals = localsOf(res);
        locals.upstream = proxyReq;
        const body = locals.body!;
        const auth = locals.auth!;
        const headers = {
          requestId: locals.requestId,
          serviceRequestId: locals.serviceRequestId,
          integratorId: auth.integrator.id,
          apiKeyId: auth.key.keyId,
        };
        for (const [name, value] of signerRequestHeaders(headers, opts.internalToken, body.length))
          proxyReq.setHeader(name, value);
        // The client's stream was consumed by the route; http-proxy's `req.pipe(proxyReq)`
        // then only ends the request after these bytes.
        if (body.length > 0) proxyReq.write(body);
      },
      proxyRes: (proxyRes: IncomingMessage, _req: IncomingMessage, res: ServerResponse) => {
        localsOf(res).upstream = undefined;
        if (res.headersSent || res.destroyed) return void proxyRes.resume();
        const challenge = proxyRes.headers['www-authenticate'];
        if (proxyRes.statusCode === 401 && challenge?.startsWith(INTERNAL_TOKEN_SCHEME)) {
          proxyRes.resume();
          opts.onUpstreamError?.('TOKEN_REFUSED');
          logger.error('the signer refused the internal token: INTERNAL_TOKEN differs between gateway and signer');
          return sendError(res, new ApiError('SERVICE_UNAVAILABLE', 'signer unavailable, retry shortly'));
        }
        // A signed quote is a few KiB: read whole, then written with its head in one write
        // (piping costs a second write syscall per answer, measured with npm run bench gateway).
        const chunks: Buffer[] = [];
        proxyRes.on('data', (chunk: Buffer) => chunks.push(chunk));
        proxyRes.once('end', () => {
          if (res.headersSent || res.destroyed) return;
          res.writeHead(proxyRes.statusCode ?? 502, endToEnd(proxyRes));
          res.end(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks));
        });
        // The signer failed mid-answer: the client cannot get a valid body any more.
        proxyRes.once('aborted', () => res.destroy());
      },
      error: (err: Error, _req: IncomingMessage, res: ServerResponse | Socket) => {
        const code = (err as NodeJS.ErrnoException).code ?? 'unknown';
        opts.onUpstreamError?.(code);
        if (!isResponse(res)) return void res.destroy();
        localsOf(res).log.warn('signer unreachable', { code });
        if (res.headersSent) {
          if (!res.writableEnded) res.destroy();
          return;
        }
        sendError(res, new ApiError('SERVICE_UNAVAILABLE', 'signer unavailable, retry shortly'));
      },
    },
  });
  return (req, res) => {
    // The upstream path is the route's own path; the client's query string is not forwarded.
    const url = req.url ?? '';
    const q = url.indexOf('?');
    if (q !== -1) req.url = url.slice(0, q);
    // Removed before http-proxy copies the headers: Node's client acts on a `Connection` header
    // it is given (a client's "close" would end the pooled connection), even if removed later.
    dropHopByHop(req.headers);
    delete req.headers[API_KEY_HEADER];
    void proxy(req, res, () => undefined);
  };
}
