/**
 * A sign request → the signer: the gateway's one way to it, one HTTP/1.1 request over a
 * keep-alive pool (docs/decisions/0014-gateway-to-signer-a-request-built-not-copied.md).
 * The sign route's steps run first (key, limit, body) and hand over what they found.
 *
 * INVARIANT: the upstream request is BUILT from what the gateway decided, never copied from the
 * client's request. It is exactly `POST <route path>` with the headers of signer-headers.ts and
 * the body bytes the route read, with their exact length, written in one call before a socket is
 * assigned. So no client header (its `Expect`, `Connection`, `Content-Length`, internal headers
 * in any case) and no client byte can reach the signer or steer a pooled connection, whatever
 * the client sends and whenever a socket frees up.
 *
 * - The signer's answer: status, and only the headers a client needs (ANSWER_HEADERS); the
 *   body read whole (a signed quote is a few KiB; at most MAX_ANSWER_BYTES).
 * - A 401 carrying the internal-token challenge (protocol INTERNAL_TOKEN_SCHEME): the signer
 *   refused the GATEWAY (another INTERNAL_TOKEN), so the client gets 503 and the operator an
 *   error log and `gateway_upstream_errors_total{reason="TOKEN_REFUSED"}`.
 * - The signer down, refusing or resetting → 503 SERVICE_UNAVAILABLE in the envelope.
 * - Admission (sign-admission.ts; docs/decisions/0071-past-capacity-a-fast-no.md): a request
 *   is sent only while the sign's deadline leaves what the signer has been taking lately, and
 *   only within the bound on requests at the signer (SIGNER_MAX_IN_FLIGHT, at most the pool's
 *   sockets, so that none waits in the agent); what is left of the deadline travels with it
 *   (SIGN_BUDGET_HEADER). A signer that has not answered by the deadline: the client is
 *   answered 503 then, and the request is left to end (its answer thrown away) on its pooled
 *   connection, keeping its slot: a signer that stalls fills the bound, and what comes next is
 *   refused at once. One the signer sends nothing on for the request timeout is destroyed.
 */
import { Agent, request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { ApiError, INTERNAL_TOKEN_SCHEME } from '@pmm/protocol';
import { sendError, type Logger, type RequestLocals } from '@pmm/core';
import { authOf } from '../keys/auth-context';
import type { SignAdmission } from './sign-admission';
import { signerRequestHeaders } from './signer-headers';

export interface SignForwardOptions {
  signerUrl: string;
  internalToken: string;
  /** Keep-alive pool to the signer (see signerAgent). */
  agent: Agent | HttpsAgent;
  logger: Logger;
  /** The sign's deadline and the bound on requests at the signer (sign-admission.ts). */
  admission: SignAdmission;
  /** A request the signer sends nothing on for this long is destroyed (REQUEST_TIMEOUT_MS): its slot and socket freed. */
  abandonAfterMs: number;
  /** Called with a short reason on every upstream failure (metrics). */
  onUpstreamError?: (reason: string) => void;
}

/** What sign-route.ts hands over: the route's declared path (never the client's request target) and the body bytes read. */
export interface SignForward {
  path: string;
  body: Buffer;
  /** The client's `Content-Encoding`, checked (protocol bodyEncoding). */
  encoding: string | undefined;
}

/** An idle pooled socket is dropped after this unless the signer announces less (Keep-Alive: timeout=…). */
const IDLE_SOCKET_MS = 60_000;
/** Sockets of the pool: SIGNER_MAX_IN_FLIGHT's ceiling, so that no request waits for one. */
export const SIGNER_SOCKETS = 512;
/** A signed quote is a few KiB; an answer larger than this is not one. */
const MAX_ANSWER_BYTES = 64 * 1024;
/** The signer's answer headers a client gets (the gateway sets its own request id, security and /v1 headers). */
const ANSWER_HEADERS = ['content-type', 'cache-control', 'retry-after'] as const;

/** The connection pool to the signer. */
export function signerAgent(signerUrl: string): Agent | HttpsAgent {
  // Keep-alive: a TCP handshake per sign request would cost more than signing. The timeout
  // matters: without one, Node's agent ignores the signer's Keep-Alive hint and reuses sockets
  // the signer is about to close (an ECONNRESET, so a 503, on the next request).
  // noDelay: a request must not wait for the signer's delayed ACK (Nagle's algorithm): up to
  // 40 ms on Linux, seen as the sign path's p99.
  const options = { keepAlive: true, maxSockets: SIGNER_SOCKETS, timeout: IDLE_SOCKET_MS, noDelay: true };
  return signerUrl.startsWith('https:') ? new HttpsAgent(options) : new Agent(options);
}

const unavailable = (cause?: unknown) =>
  new ApiError('SERVICE_UNAVAILABLE', 'signer unavailable, retry shortly', {}, { cause });

/** The forwarder of sign-route.ts. */
export function signForwarder(
  opts: SignForwardOptions,
): (res: ServerResponse, locals: RequestLocals, forward: SignForward) => void {
  const { agent, logger } = opts;
  const target = new URL(opts.signerUrl);
  const request = target.protocol === 'https:' ? httpsRequest : httpRequest;
  const { admission } = opts;

  const failed = (res: ServerResponse, locals: RequestLocals, reason: string, cause?: Error) => {
    opts.onUpstreamError?.(reason);
    if (res.headersSent) {
      if (!res.writableEnded) res.destroy();
      return;
    }
    locals.log.warn('signer unreachable', { code: reason, error: cause });
    sendError(res, unavailable(cause));
  };

  const answer = (res: ServerResponse, upstream: IncomingMessage, body: Buffer) => {
    if (res.headersSent || res.destroyed) return;
    const challenge = upstream.headers['www-authenticate'];
    if (upstream.statusCode === 401 && challenge?.startsWith(INTERNAL_TOKEN_SCHEME)) {
      opts.onUpstreamError?.('TOKEN_REFUSED');
      logger.error('the signer refused the internal token: INTERNAL_TOKEN differs between gateway and signer');
      return sendError(res, unavailable());
    }
    res.statusCode = upstream.statusCode ?? 502;
    for (const name of ANSWER_HEADERS) {
      const value = upstream.headers[name];
      if (value !== undefined) res.setHeader(name, value);
    }
    res.setHeader('Content-Length', body.length);
    res.end(body);
  };

  return (res, locals, { path, body, encoding }) => {
    const admitted = admission.admit(res);
    if (!admitted) return;
    const auth = authOf(res);
    const headers = signerRequestHeaders(
      {
        requestId: locals.requestId,
        serviceRequestId: locals.serviceRequestId,
        integratorId: auth.integrator.id,
        apiKeyId: auth.key.keyId,
        encoding,
        budgetMs: Math.max(0, Math.floor(admitted.deadline.left())),
      },
      opts.internalToken,
      body.length,
    );
    const sentAt = Date.now();
    let settled = false;
    const settle = () => {
      if (settled) return false;
      settled = true;
      admitted.release();
      locals.upstream = undefined;
      return true;
    };
    const upstream = request({
      agent,
      protocol: target.protocol,
      hostname: target.hostname,
      port: target.port,
      method: 'POST',
      path,
      headers,
    });
    locals.upstream = upstream;
    // Also after the deadline answered the client (the frame's timeout is cleared with the answer).
    upstream.setTimeout(opts.abandonAfterMs, () =>
      upstream.destroy(Object.assign(new Error('no answer from the signer'), { code: 'TIMEOUT' })),
    );
    upstream.on('response', (answered) => {
      const chunks: Buffer[] = [];
      let size = 0;
      answered.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > MAX_ANSWER_BYTES) return void upstream.destroy(new Error('answer too large'));
        chunks.push(chunk);
      });
      answered.once('end', () => {
        if (!settle()) return;
        admission.signerTime.observe(Date.now() - sentAt);
        answer(res, answered, chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size));
      });
      // A signer that closes before the whole answer (its 'end' never comes): the close of an
      // incomplete answer, rather than the deprecated 'aborted' event.
      answered.once('close', () => !answered.complete && settle() && failed(res, locals, 'ABORTED'));
    });
    upstream.once('error', (err: NodeJS.ErrnoException) => settle() && failed(res, locals, err.code ?? 'unknown', err));
    // The client left, or the request timed out (request-frame.ts destroys the upstream then):
    // the socket is given up rather than kept busy for nobody. Not when the deadline answered:
    // the signer answers soon (same deadline), and the slot stays taken until it has.
    res.once('close', () => {
      if (!admission.expired(res) && settle()) upstream.destroy();
    });
    upstream.end(body);
  };
}
