/**
 * A stand-in for the signer, on both ways the gateway reaches it (HTTP for the library route,
 * the sign link for the fast path; the link served by core's own serveSignLink): records every
 * request (method, path, headers, exact body bytes, which way it came) and answers as told: a
 * valid SignQuoteResponse, an error envelope, never (accept and hang), or a dropped connection.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { ApiError } from '@pmm/protocol';
import { createLogger, serveSignLink, type LinkAnswer } from '@pmm/core';

export interface Recorded {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
  via: 'http' | 'link';
}

export type Behavior =
  | { kind: 'ok'; body?: string }
  | { kind: 'status'; status: number; body: string; headers?: Record<string, string> }
  | { kind: 'hang' }
  | { kind: 'drop' };

export const SIGN_OK_BODY = JSON.stringify({ verificationData: `0x${'00'.repeat(32)}`, timestamp: 1_767_225_600 });

export interface FakeSigner {
  url: string;
  port: number;
  requests: Recorded[];
  /** The internal token each sign link was opened with, in order. */
  linkTokens: string[];
  /** From now on, refuse sign links with 401 (as a signer with another INTERNAL_TOKEN would). */
  refuseLinks(): void;
  behave(b: Behavior): void;
  close(): Promise<void>;
}

export async function fakeSigner(port = 0): Promise<FakeSigner> {
  let behavior: Behavior = { kind: 'ok' };
  const requests: Recorded[] = [];
  const sockets = new Set<Socket>();
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      requests.push({
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks),
        via: 'http',
      });
      const b = behavior;
      if (b.kind === 'hang') return;
      if (b.kind === 'drop') return req.socket.destroy();
      if (b.kind === 'ok') {
        const body = b.body ?? SIGN_OK_BODY;
        res.writeHead(200, {
          'Content-Type': 'application/json; charset=utf-8',
          'X-Request-Id': String(req.headers['x-request-id']),
        });
        return res.end(body);
      }
      res.writeHead(b.status, { 'Content-Type': 'application/json; charset=utf-8', ...(b.headers ?? {}) });
      res.end(b.body);
    });
  });
  const linkTokens: string[] = [];
  let refuse = false;
  serveSignLink(server, {
    authorize: (headers) => {
      if (refuse) throw new ApiError('UNAUTHORIZED', 'internal token required');
      linkTokens.push(String(headers['x-internal-token']));
    },
    maxBodyBytes: 64 * 1024,
    logger: createLogger({ silent: true, service: 'fake-signer' }),
    handle: (request) => {
      requests.push({ method: 'POST', url: request.path, headers: request.headers, body: request.body, via: 'link' });
      const b = behavior;
      const answer = (status: number, headers: Record<string, string>, body: string): LinkAnswer => ({
        status,
        headers: {
          'Content-Type': 'application/json; charset=utf-8',
          'Content-Length': String(Buffer.byteLength(body)),
          ...headers,
        },
        body: Buffer.from(body),
      });
      if (b.kind === 'hang') return new Promise<LinkAnswer>(() => undefined);
      if (b.kind === 'drop') {
        for (const s of sockets) s.destroy();
        return new Promise<LinkAnswer>(() => undefined);
      }
      if (b.kind === 'ok')
        return answer(200, { 'X-Request-Id': String(request.headers['x-request-id']) }, b.body ?? SIGN_OK_BODY);
      return answer(b.status, b.headers ?? {}, b.body);
    },
  });
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(port, '127.0.0.1', r));
  const actual = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${actual}`,
    port: actual,
    requests,
    linkTokens,
    refuseLinks: () => {
      refuse = true;
    },
    behave: (b) => {
      behavior = b;
    },
    close: () =>
      new Promise<void>((r) => {
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  };
}
