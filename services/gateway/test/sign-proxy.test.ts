import { request as httpRequest } from 'node:http';
import request from 'supertest';
import type { Gateway } from '@pmm/gateway';
import { until } from '@pmm/testkit';
import { call, harness, type Harness } from './support/harness';
import { SIGN_OK_BODY, fakeSigner, type Behavior, type FakeSigner } from './support/fake-signer';

let h: Harness;
let signer: FakeSigner;
let gw: Gateway;
let key: string;

const BODY = JSON.stringify({
  chainId: 8453,
  tokenIn: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913',
  tokenOut: '0x4200000000000000000000000000000000000006',
  fee: '30',
  userAddress: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8',
});

beforeAll(async () => {
  h = await harness();
  signer = await fakeSigner();
  gw = await h.gateway({ signerUrl: signer.url, requestTimeoutMs: 1_500 });
  key = await h.apiKey({ id: 'acme' });
});
afterAll(async () => {
  await h.cleanup();
  await signer.close();
});
beforeEach(() => {
  signer.requests.length = 0;
  signer.behave({ kind: 'ok' });
});

/**
 * Every case runs both ways to the signer: the fast path over the sign link (`gw.app`) and the
 * Express route with http-proxy-middleware (`gw.expressApp`, what the fast path hands over),
 * so the library keeps pinning what the client sees.
 */
const ROUTES = [
  ['sign link', () => gw.app, 'link'],
  ['http-proxy-middleware', () => gw.expressApp, 'http'],
] as const;

/** The only headers the signer gets on the link: the request's identity (signer-headers.ts). */
const IDENTITY_HEADERS = ['x-api-key-id', 'x-integrator-id', 'x-request-id'];

describe.each(ROUTES)('via the %s', (_name, target, via) => {
  const sign = (path: string, body: string | Buffer, k = key) =>
    call(request(target()).post(path).set('X-API-KEY', k).set('Content-Type', 'application/json').send(body));

  /** A chunked upload (no Content-Length), one write per piece; the answer's status and text. */
  const postChunked = async (path: string, pieces: string[]) => {
    const base = new URL(await h.listen(target()));
    return new Promise<{ status: number; text: string }>((resolve, reject) => {
      const req = httpRequest(
        {
          host: base.hostname,
          port: base.port,
          path,
          method: 'POST',
          headers: { 'X-API-KEY': key, 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked' },
        },
        (res) => {
          let text = '';
          res.on('data', (c: Buffer) => (text += c.toString()));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
        },
      );
      req.on('error', reject);
      for (const piece of pieces) req.write(piece);
      req.end();
    });
  };

  describe.each(['/v2/swap/sign', '/v1/swap/sign'])('POST %s through the proxy', (path) => {
    const v1 = path.startsWith('/v1');

    it('behavior: forwards the exact body bytes to the same path, with internal token, request id and integrator id', async () => {
      // Odd spacing, key order and a unicode escape: any re-serialisation would change the bytes.
      const text = `{ "fee":"30" ,\n"tokenIn": "0xA\\u0042" , "x":[1,2.50], "é": "€" }  `;
      const body = Buffer.from(text, 'utf8');
      const res = await call(
        request(target())
          .post(`${path}?ignored=1`)
          .set('X-API-KEY', key)
          .set('X-Request-Id', 'trace-123')
          .set('X-Internal-Token', 'spoofed')
          .set('X-Integrator-Id', 'spoofed')
          .set('X-Api-Key-Id', 'spoofed')
          .set('Content-Type', 'application/json')
          .send(text),
      );
      expect(res.status).toBe(200);
      expect(res.text).toBe(SIGN_OK_BODY);
      expect(signer.requests).toHaveLength(1);
      const got = signer.requests[0]!;
      expect(got.method).toBe('POST');
      expect(got.url).toBe(path);
      expect(got.body.equals(body)).toBe(true);
      expect(got.via).toBe(via);
      if (via === 'http') {
        expect(got.headers['x-internal-token']).toBe('test-internal-token-0123456789');
        expect(got.headers['content-length']).toBe(String(body.length));
        expect(got.headers['content-type']).toBe('application/json');
      } else {
        // The token opened the link; each request carries its identity and nothing else.
        expect(signer.linkTokens.at(-1)).toBe('test-internal-token-0123456789');
        expect(Object.keys(got.headers).sort()).toEqual(IDENTITY_HEADERS);
      }
      expect(got.headers['x-request-id']).toBe('trace-123');
      expect(got.headers['x-integrator-id']).toBe('acme');
      expect(got.headers['x-api-key-id']).toBe(key.slice(0, (got.headers['x-api-key-id'] as string).length));
      expect(got.headers['x-api-key-id']).not.toBe('spoofed');
      expect(got.headers['x-api-key']).toBeUndefined();
      expect(res.headers['x-request-id']).toBe('trace-123');
      expect(res.headers['ratelimit-limit']).toBe('100000');
      if (v1) {
        expect(res.headers.deprecation).toBe('true');
        expect(res.headers.link).toBe('</v2/swap/sign>; rel="successor-version"');
      }
    });

    it('behavior: a chunked upload (no Content-Length) is forwarded with its exact bytes', async () => {
      const { status } = await postChunked(path, [BODY.slice(0, 10), BODY.slice(10)]);
      expect(status).toBe(200);
      expect(signer.requests[0]!.body.toString('utf8')).toBe(BODY);
      if (via === 'http') expect(signer.requests[0]!.headers['content-length']).toBe(String(Buffer.byteLength(BODY)));
      expect(signer.requests[0]!.headers['transfer-encoding']).toBeUndefined();
    });

    it('behavior: the signer’s error answers are passed through (status, envelope, headers)', async () => {
      const envelope = (code: string, message: string) =>
        JSON.stringify({ error: { code, message, requestId: 'from-signer' } });
      const cases: [number, string, string][] = v1
        ? [
            [400, 'UNSUPPORTED_FIELD', 'chainId: unsupported field'],
            [422, 'VALIDATION_ERROR', 'fee: must be at most 10000'],
            [
              403,
              'ADDRESS_NOT_WHITELISTED',
              'userAddress: 0x70997970C51812dc3A010C7d01b50e0d17dc79C8 is not whitelisted for this API key',
            ],
            [500, 'SIGNING_FAILED', 'signing failed'],
          ]
        : [
            [400, 'INVALID_JSON', 'body: malformed JSON'],
            [400, 'PAIR_NOT_FOUND', 'tokenIn/tokenOut: not a tracked pair'],
            [422, 'VALIDATION_ERROR', 'userAddress: must be a 0x-prefixed 20-byte hex address'],
            [503, 'SERVICE_UNAVAILABLE', 'chain 8453: the pair list is not loaded yet (bootstrapping); retry shortly'],
            [500, 'ENCODING_FAILED', 'encoding failed'],
          ];
      for (const [status, code, message] of cases) {
        signer.behave({
          kind: 'status',
          status,
          body: envelope(code, message),
          // As the real signer does: every 503 names its wait (ApiError sets Retry-After).
          headers:
            status === 503 ? { 'Cache-Control': 'no-store', 'Retry-After': '1' } : { 'Cache-Control': 'no-store' },
        });
        const res = await sign(path, BODY);
        expect(res.status).toBe(status);
        expect(res.text).toBe(envelope(code, message));
        expect(res.headers['cache-control']).toBe('no-store');
        if (status === 503) expect(res.headers['retry-after']).toBe('1');
      }
    });

    it('error: a body over the limit is 413 by Content-Length, and nothing reaches the signer', async () => {
      const res = await sign(path, `{"fee":"${'1'.repeat(16 * 1024)}"}`);
      expect(res.status).toBe(413);
      expect(res.body).toEqual({
        error: {
          code: 'PAYLOAD_TOO_LARGE',
          message: 'body: larger than 16384 bytes',
          requestId: res.headers['x-request-id'],
        },
      });
      expect(signer.requests).toHaveLength(0);
    });

    it('behavior: exactly the limit is accepted', async () => {
      const body = `{"fee":"${'1'.repeat(16 * 1024 - 10)}"}`;
      expect(Buffer.byteLength(body)).toBe(16 * 1024);
      expect((await sign(path, body)).status).toBe(200);
    });

    it('error: a chunked body over the limit is 413 by counting bytes', async () => {
      const { status, text } = await postChunked(
        path,
        Array.from({ length: 20 }, () => 'x'.repeat(1024)),
      );
      expect(status).toBe(413);
      expect(JSON.parse(text).error.code).toBe('PAYLOAD_TOO_LARGE');
      expect(signer.requests).toHaveLength(0);
    });

    it('error: signer answering but hanging is 503 SERVICE_UNAVAILABLE within the request timeout', async () => {
      signer.behave({ kind: 'hang' });
      const started = Date.now();
      const res = await sign(path, BODY);
      const took = Date.now() - started;
      expect(res.status).toBe(503);
      expect(res.body).toEqual({
        error: {
          code: 'SERVICE_UNAVAILABLE',
          message: 'request timed out after 1500 ms',
          requestId: res.headers['x-request-id'],
        },
      });
      expect(took).toBeGreaterThanOrEqual(1_400);
      expect(took).toBeLessThan(2_500);
    });

    it('error: signer dropping the connection is 503 in the envelope, never HTML', async () => {
      signer.behave({ kind: 'drop' });
      const res = await sign(path, BODY);
      expect(res.status).toBe(503);
      expect(res.body).toEqual({
        error: {
          code: 'SERVICE_UNAVAILABLE',
          message: 'signer unavailable, retry shortly',
          requestId: res.headers['x-request-id'],
        },
      });
    });
  });
});

describe('sign links', () => {
  it('behavior: requests are spread over SIGNER_LINKS links, each opened with the internal token', async () => {
    const s = await fakeSigner();
    try {
      const gw3 = await h.gateway({ signerUrl: s.url, signerLinks: 3 });
      for (let i = 0; i < 6; i++) {
        const res = await call(
          request(gw3.app)
            .post('/v2/swap/sign')
            .set('X-API-KEY', key)
            .set('Content-Type', 'application/json')
            .send(BODY),
        );
        expect(res.status).toBe(200);
      }
      expect(s.linkTokens).toEqual(Array.from({ length: 3 }, () => 'test-internal-token-0123456789'));
      expect(s.requests.map((r) => r.via)).toEqual(Array.from({ length: 6 }, () => 'link'));
    } finally {
      await s.close();
    }
  });

  it('error: a signer refusing the link (wrong internal token) is 503 to the client, never its 401', async () => {
    const s = await fakeSigner();
    s.refuseLinks();
    try {
      const gw4 = await h.gateway({ signerUrl: s.url });
      const res = await call(
        request(gw4.app).post('/v2/swap/sign').set('X-API-KEY', key).set('Content-Type', 'application/json').send(BODY),
      );
      expect(res.status).toBe(503);
      expect(res.body.error).toMatchObject({
        code: 'SERVICE_UNAVAILABLE',
        message: 'signer unavailable, retry shortly',
      });
      expect(s.requests).toHaveLength(0);
    } finally {
      await s.close();
    }
  });
  it('error: a link that answers nothing is closed at the request timeout even when the client left before it', async () => {
    const s = await fakeSigner();
    try {
      const gw5 = await h.gateway({ signerUrl: s.url, requestTimeoutMs: 1_000, signerLinks: 1 });
      const base = new URL(await h.listen(gw5.app));
      s.behave({ kind: 'hang' });
      // A client whose own timeout is shorter than the gateway's (the SDK's is the same 10 s).
      const gone = httpRequest({
        host: base.hostname,
        port: base.port,
        path: '/v2/swap/sign',
        method: 'POST',
        headers: { 'X-API-KEY': key, 'Content-Type': 'application/json' },
      });
      gone.on('error', () => undefined);
      gone.end(BODY);
      await until(() => s.requests.length === 1);
      gone.destroy();
      await new Promise((r) => setTimeout(r, 1_500));
      // Nothing came back on the link within the timeout: presumed stuck (a wedged signer, a
      // dropped flow), it is closed, and the next request opens a fresh one. Else every later
      // request on it would wait, and with clients that give up first, nobody would close it.
      s.behave({ kind: 'ok' });
      const res = await call(
        request(gw5.app).post('/v2/swap/sign').set('X-API-KEY', key).set('Content-Type', 'application/json').send(BODY),
      );
      expect(res.status).toBe(200);
      expect(s.linkTokens).toHaveLength(2);
    } finally {
      await s.close();
    }
  });
});

describe('signer down', () => {
  it('error: nothing listening at SIGNER_URL is 503 at once (connection refused)', async () => {
    const down = await fakeSigner();
    const url = down.url;
    await down.close();
    const gwDown = await h.gateway({ signerUrl: url, requestTimeoutMs: 5_000 });
    const started = Date.now();
    const res = await call(
      request(gwDown.app)
        .post('/v2/swap/sign')
        .set('X-API-KEY', key)
        .set('Content-Type', 'application/json')
        .send(BODY),
    );
    expect(res.status).toBe(503);
    expect(res.body.error).toMatchObject({ code: 'SERVICE_UNAVAILABLE', message: 'signer unavailable, retry shortly' });
    expect(res.headers['retry-after']).toBe('1');
    expect(Date.now() - started).toBeLessThan(1_000);
  });

  it('behavior: a signer stopped and started again is used again without restarting the gateway', async () => {
    const s = await fakeSigner();
    const port = s.port;
    const gw2 = await h.gateway({ signerUrl: s.url });
    const send = () =>
      call(
        request(gw2.app).post('/v2/swap/sign').set('X-API-KEY', key).set('Content-Type', 'application/json').send(BODY),
      );
    expect((await send()).status).toBe(200);
    await s.close();
    expect((await send()).status).toBe(503);
    const again = await fakeSigner(port);
    try {
      expect((await send()).status).toBe(200);
    } finally {
      await again.close();
    }
  });
});

describe('the sign link against http-proxy-middleware', () => {
  /**
   * One request, as the signer receives it (path, body bytes, the request's identity) and as
   * the client receives it (status, headers, body). Header names are compared without case and
   * in sorted order, and the ones that only frame the message (Content-Length or chunked,
   * Connection, Keep-Alive, Date) or differ between two requests (the rate-limit budget and
   * reset, a generated X-Request-Id) are left out.
   */
  async function exchange(app: Gateway['app'], path: string, headers: Record<string, string>, body: string) {
    signer.requests.length = 0;
    const base = new URL(await h.listen(app));
    const answer = await new Promise<{ status: number; message: string; headers: string[]; body: string }>(
      (resolve, reject) => {
        const req = httpRequest(
          { host: base.hostname, port: base.port, path, method: 'POST', headers: { 'X-API-KEY': key, ...headers } },
          (res) => {
            let text = '';
            res.on('data', (c: Buffer) => (text += c.toString('latin1')));
            res.on('end', () =>
              resolve({
                status: res.statusCode ?? 0,
                message: res.statusMessage ?? '',
                headers: res.rawHeaders
                  .reduce<string[]>((acc, v, i, all) => {
                    if (
                      i % 2 === 0 &&
                      !/^(date|x-request-id|keep-alive|connection|content-length|transfer-encoding|ratelimit-remaining|ratelimit-reset)$/i.test(
                        v,
                      )
                    )
                      acc.push(`${v.toLowerCase()}: ${all[i + 1]}`);
                    return acc;
                  }, [])
                  .sort(),
                body: text,
              }),
            );
          },
        );
        req.on('error', reject);
        req.end(body);
      },
    );
    const got = signer.requests[0];
    return {
      answer,
      upstream: got && {
        method: got.method,
        url: got.url,
        identity: IDENTITY_HEADERS.map((name) => got.headers[name]),
        body: got.body.toString('latin1'),
      },
    };
  }

  it('behavior: the signer receives the same request, and the client the same answer', async () => {
    const cases: [string, Record<string, string>, string, Behavior][] = [
      [
        '/v2/swap/sign?x=1',
        { 'Content-Type': 'application/json', 'X-Request-Id': 'same-1', 'User-Agent': 'ua/1' },
        BODY,
        { kind: 'ok' },
      ],
      [
        '/v1/swap/sign',
        {
          'Content-Type': 'text/plain',
          'X-Request-Id': 'same-2',
          'X-Integrator-Id': 'spoof',
          'X-Internal-Token': 'spoof',
        },
        '{"é":"€"}',
        { kind: 'ok' },
      ],
      [
        '/v2/swap/sign',
        { 'X-Request-Id': 'same-3', 'Accept-Encoding': 'gzip' },
        '',
        { kind: 'status', status: 422, body: '{"error":{}}', headers: { 'Cache-Control': 'no-store', 'X-Extra': 'a' } },
      ],
    ];
    for (const [path, headers, body, behavior] of cases) {
      signer.behave(behavior);
      const viaLink = await exchange(gw.app, path, headers, body);
      const viaLibrary = await exchange(gw.expressApp, path, headers, body);
      expect(viaLink.upstream).toBeDefined();
      expect(viaLink.upstream!.identity.every((v) => typeof v === 'string' && v.length > 0)).toBe(true);
      expect(viaLink).toEqual(viaLibrary);
    }
  });
});
