/**
 * A small node:http forwarder for the sign routes' fast path (sign-fast-path.ts): the same
 * request and answer as http-proxy-middleware in sign-proxy.ts, without its per-request
 * cost. Measured with `npm run bench gateway` (and `BENCH_CPU_PROF`), the Express route
 * through http-proxy-middleware spent several times the CPU of signing itself; this is the
 * request that carries money, so it gets the short path. The library stays on the Express
 * route (browser requests when CORS is on) and test/sign-proxy.test.ts runs every case
 * through both and compares what the signer and the client receive.
 *
 * What it mirrors of http-proxy (v1, as configured in sign-proxy.ts):
 * - upstream: the client's headers minus those in {@link signerRequestHeaders}'s drop list,
 *   `Host` set to the signer's (changeOrigin), the internal headers set, the body's exact
 *   bytes with their `Content-Length`, the route's path (no query string);
 * - answer: the signer's status, status message and headers (plus `Connection` as http-proxy
 *   sets it when the signer sent none), then its body;
 * - failures: the caller's `onError`. No timer of its own: the request frame's timeout (armed
 *   by the fast path, same length as the library's proxyTimeout) answers 503 and aborts the
 *   upstream request.
 * One difference, on purpose: the answer is written once the signer's is complete (they are
 * small), so a signer failing mid-answer is a clean 503 here, where the library, already
 * streaming, can only cut the connection.
 */
import {
  Agent,
  request as httpRequest,
  type ClientRequest,
  type IncomingMessage,
  type OutgoingHttpHeaders,
  type ServerResponse,
} from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import {
  API_KEY_HEADER,
  API_KEY_ID_HEADER,
  INTEGRATOR_ID_HEADER,
  INTERNAL_TOKEN_HEADER,
  REQUEST_ID_HEADER,
} from '@pmm/protocol';

/** What the gateway adds to, and removes from, a sign request on its way to the signer. */
export interface SignerHeaders {
  internalToken: string;
  requestId: string;
  integratorId: string;
  /** The API key's public id (never the key): the signer writes it into the audit trail. */
  apiKeyId: string;
}

/** Client headers never forwarded: the API key stays in the gateway; the body is re-framed. */
export const DROPPED_REQUEST_HEADERS = [API_KEY_HEADER, 'transfer-encoding'] as const;

/** The headers set on every upstream sign request (they replace the client's own values). */
export function signerRequestHeaders(h: SignerHeaders, bodyLength: number): [string, string | number][] {
  return [
    [INTERNAL_TOKEN_HEADER, h.internalToken],
    [REQUEST_ID_HEADER, h.requestId],
    [INTEGRATOR_ID_HEADER, h.integratorId],
    [API_KEY_ID_HEADER, h.apiKeyId],
    ['Content-Length', bodyLength],
  ];
}

export interface SignForwarderOptions {
  signerUrl: string;
  /** Keep-alive pool to the signer (shared with the library's proxy). */
  agent: Agent | HttpsAgent;
}

export interface ForwardCallbacks {
  /** The upstream request failed before its answer was complete (nothing was written to `res`). */
  onError(err: NodeJS.ErrnoException): void;
  /** The upstream request, while it runs (the request timeout aborts it). */
  onUpstream?(upstream: ClientRequest | undefined): void;
}

export type SignForwarder = (
  req: IncomingMessage,
  res: ServerResponse,
  path: string,
  body: Buffer,
  headers: SignerHeaders,
  cb: ForwardCallbacks,
) => void;

export function createSignForwarder(opts: SignForwarderOptions): SignForwarder {
  const target = new URL(opts.signerUrl);
  const send = target.protocol === 'https:' ? httpsRequest : httpRequest;
  const host = target.host;
  const base = {
    protocol: target.protocol,
    hostname: target.hostname.replace(/^\[|\]$/g, ''),
    port: target.port || undefined,
    agent: opts.agent,
  };
  return (req, res, path, body, h, cb) => {
    const headers: OutgoingHttpHeaders = {};
    const given = req.headers;
    for (const name in given) headers[name] = given[name];
    for (const name of DROPPED_REQUEST_HEADERS) delete headers[name];
    headers.host = host;
    // As http-proxy's setHeader does: a header the client sent is replaced where it stands,
    // a new one is appended (the order the signer sees is the library's).
    for (const [name, value] of signerRequestHeaders(h, body.length)) {
      const lower = name.toLowerCase();
      if (lower in headers) headers[lower] = value;
      else headers[name] = value;
    }
    const upstream = send({ ...base, method: 'POST', path, headers });
    cb.onUpstream?.(upstream);
    upstream.on('error', (err: NodeJS.ErrnoException) => {
      cb.onUpstream?.(undefined);
      cb.onError(err);
    });
    // The client went away before the answer: stop the upstream request too.
    res.once('close', () => {
      if (!res.writableFinished && !upstream.destroyed) upstream.destroy();
    });
    upstream.on('response', (answer: IncomingMessage) => {
      const chunks: Buffer[] = [];
      answer.on('data', (chunk: Buffer) => chunks.push(chunk));
      answer.on('end', () => {
        cb.onUpstream?.(undefined);
        // Answered already (the request timeout) or the client is gone: drop the late answer.
        if (res.headersSent || res.destroyed) return;
        const out = answer.headers;
        // http-proxy's setConnection.
        if (req.httpVersion === '1.0') out.connection = req.headers.connection ?? 'close';
        else if (out.connection === undefined) out.connection = req.headers.connection ?? 'keep-alive';
        for (const name in out) {
          const value = out[name];
          if (value !== undefined) res.setHeader(name, value);
        }
        res.statusCode = answer.statusCode ?? 502;
        if (answer.statusMessage) res.statusMessage = answer.statusMessage;
        // The whole answer at once, as a latin1 string (the same bytes): Node then sends the
        // headers and the body in one write() instead of a writev() of two buffers.
        const answerBody = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
        res.end(answerBody.toString('latin1'), 'latin1');
      });
    });
    upstream.end(body.toString('latin1'), 'latin1');
  };
}
