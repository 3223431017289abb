/**
 * A stand-in for the signer over HTTP: records every request (method, path, headers, exact
 * body bytes) and answers as told: a valid SignQuoteResponse, an error envelope, never (accept
 * and hang), or a dropped connection; or, once told so, refuses the gateway's internal token
 * as a signer with another INTERNAL_TOKEN does (401 with the internal-token challenge).
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { INTERNAL_TOKEN_SCHEME, SIGNER_ACCESS_PATH } from '@pmm/protocol';

export interface Recorded {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

export type Behavior =
  | { kind: 'ok'; body?: string }
  | { kind: 'status'; status: number; body: string; headers?: Record<string, string> }
  | { kind: 'hang' }
  | { kind: 'drop' };

/** A sign request's body, as a client sends it (the fake signer answers any). */
export const SIGN_REQUEST_BODY = JSON.stringify({
  chainId: 8453,
  tokenIn: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913',
  tokenOut: '0x4200000000000000000000000000000000000006',
  fee: '30',
  userAddress: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8',
});

/** A signed quote as the signer answers on /v2; on /v1 the earlier form, without `deadline`. */
export const SIGN_OK_BODY = JSON.stringify({
  verificationData: `0x${'00'.repeat(32)}`,
  timestamp: 1_767_225_600,
  deadline: 1_767_225_660,
});
export const V1_SIGN_OK_BODY = JSON.stringify({ verificationData: `0x${'00'.repeat(32)}`, timestamp: 1_767_225_600 });

export interface FakeSigner {
  url: string;
  port: number;
  requests: Recorded[];
  /** From now on, refuse every request with the internal-token challenge (a signer with another INTERNAL_TOKEN). */
  refuseToken(): void;
  behave(b: Behavior): void;
  close(): Promise<void>;
}

export async function fakeSigner(port = 0): Promise<FakeSigner> {
  let behavior: Behavior = { kind: 'ok' };
  const requests: Recorded[] = [];
  const sockets = new Set<Socket>();
  let refuse = false;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      requests.push({
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks),
      });
      if (refuse) {
        res.writeHead(401, {
          'Content-Type': 'application/json; charset=utf-8',
          'WWW-Authenticate': INTERNAL_TOKEN_SCHEME,
        });
        return res.end(
          JSON.stringify({ error: { code: 'UNAUTHORIZED', message: 'invalid internal token', requestId: 'x' } }),
        );
      }
      if (req.url === SIGNER_ACCESS_PATH) {
        res.writeHead(204);
        return res.end();
      }
      const b = behavior;
      if (b.kind === 'hang') return;
      if (b.kind === 'drop') return req.socket.destroy();
      if (b.kind === 'ok') {
        const body = b.body ?? (req.url?.startsWith('/v1/') ? V1_SIGN_OK_BODY : SIGN_OK_BODY);
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
    refuseToken: () => {
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
