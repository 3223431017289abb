/**
 * `POST /v2/swap/sign` and `POST /v1/swap/sign` → the signer, through http-proxy-middleware,
 * on the Express route. Most sign requests take the fast path over the sign link instead
 * (sign-fast-path.ts); this one serves the requests the fast path hands to Express (browser
 * requests when CORS is on, compressed bodies) and is the reference the link is tested against.
 *
 * - The body forwarded is exactly the bytes read by bodyLimit (never parsed here).
 * - Added headers: `X-Internal-Token` (the shared secret), `X-Request-Id`, `X-Integrator-Id`,
 *   `X-Api-Key-Id` (the key's public id, for the audit trail), as listed by signer-headers.ts; the client's own values of those headers and its `X-API-KEY`
 *   never reach the signer.
 * - The signer's answer (status, headers, body) is passed through.
 * - The signer down, refusing, resetting or too slow → 503 SERVICE_UNAVAILABLE in the
 *   envelope (never http-proxy's default 504 text page). The request timeout (request-frame.ts)
 *   answers first when the signer accepts but does not answer; it then aborts the upstream
 *   request (request-frame.ts).
 */
import { Agent, type ClientRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import type { Socket } from 'node:net';
import type { Request, RequestHandler, Response } from 'express';
import { createProxyMiddleware } from 'http-proxy-middleware';
import { ApiError } from '@pmm/protocol';
import { contextOf, sendError } from '@pmm/core';
import { authOf } from './auth-context';
import { rawBodyOf } from './body-limit';
import { DROPPED_REQUEST_HEADERS, signerRequestHeaders } from './signer-headers';

export interface SignProxyOptions {
  signerUrl: string;
  internalToken: string;
  timeoutMs: number;
  /** Keep-alive pool to the signer (see signerAgent). */
  agent: Agent | HttpsAgent;
  /** Called with a short reason on every upstream failure (metrics). */
  onUpstreamError?: (reason: string) => void;
}

function isResponse(x: Response | Socket): x is Response {
  return typeof (x as Response).writeHead === 'function';
}

/** The connection pool of the proxy to the signer. */
export function signerAgent(signerUrl: string): Agent | HttpsAgent {
  // Keep-alive to the signer: a TCP handshake per sign request would cost more than signing.
  return signerUrl.startsWith('https:')
    ? new HttpsAgent({ keepAlive: true, maxSockets: 512 })
    : new Agent({ keepAlive: true, maxSockets: 512 });
}

/** The proxy middleware; mount it on the two sign routes (the upstream path is the route's). */
export function signProxy(opts: SignProxyOptions): { handler: RequestHandler } {
  const agent = opts.agent;
  const proxy = createProxyMiddleware<Request, Response>({
    target: opts.signerUrl,
    changeOrigin: true,
    xfwd: false,
    agent,
    proxyTimeout: opts.timeoutMs,
    on: {
      proxyReq: (proxyReq: ClientRequest, _req: Request, res: Response) => {
        res.locals.upstream = proxyReq;
        const body = rawBodyOf(res);
        for (const name of DROPPED_REQUEST_HEADERS) proxyReq.removeHeader(name);
        const auth = authOf(res);
        const headers = {
          requestId: contextOf(res).requestId,
          integratorId: auth.integrator.id,
          apiKeyId: auth.key.keyId,
        };
        for (const [name, value] of signerRequestHeaders(headers, opts.internalToken, body.length))
          proxyReq.setHeader(name, value);
        // The client's stream was consumed by bodyLimit; http-proxy's `req.pipe(proxyReq)`
        // then only ends the request after these bytes.
        if (body.length > 0) proxyReq.write(body);
      },
      proxyRes: (_proxyRes: IncomingMessage, _req: Request, res: Response) => {
        res.locals.upstream = undefined;
      },
      error: (err: Error, _req: Request, res: Response | Socket) => {
        const code = (err as NodeJS.ErrnoException).code ?? 'unknown';
        opts.onUpstreamError?.(code);
        if (!isResponse(res)) return void res.destroy();
        contextOf(res).log?.warn('signer unreachable', { code });
        if (res.headersSent) {
          // The signer failed mid-answer: the client cannot get a valid body any more.
          if (!res.writableEnded) res.destroy();
          return;
        }
        sendError(res, new ApiError('SERVICE_UNAVAILABLE', 'signer unavailable, retry shortly'));
      },
    },
  });
  const handler: RequestHandler = (req, res, next) => {
    // The upstream path is the route's own path; the client's query string is not forwarded.
    req.url = req.path;
    void proxy(req, res, next);
  };
  return { handler };
}
