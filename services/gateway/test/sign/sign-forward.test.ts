import { request as httpRequest } from 'node:http';
import request from 'supertest';
import { SIGNER_REQUEST_HEADER_NAMES, type Gateway } from '@pmm/gateway';
import { parseRawResponses, rawExchange } from '@pmm/testkit';
import { call, harness, type Harness } from '../support/harness';
import {
  SIGN_OK_BODY,
  SIGN_REQUEST_BODY as BODY,
  V1_SIGN_OK_BODY,
  fakeSigner,
  type FakeSigner,
} from '../support/fake-signer';

let h: Harness;
let signer: FakeSigner;
let gw: Gateway;
let key: string;

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

describe('POST to the signer: one request built by the gateway', () => {
  const target = () => gw.app;
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

  describe.each(['/v2/swap/sign', '/v1/swap/sign'])('POST %s to the signer', (path) => {
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
          .set('X-Service-Request-Id', 'spoofed')
          .set('Content-Type', 'application/json')
          .send(text),
      );
      expect(res.status).toBe(200);
      expect(res.text).toBe(v1 ? V1_SIGN_OK_BODY : SIGN_OK_BODY);
      expect(signer.requests).toHaveLength(1);
      const got = signer.requests[0]!;
      expect(got.method).toBe('POST');
      expect(got.url).toBe(path);
      expect(got.body.equals(body)).toBe(true);
      expect(got.headers['x-internal-token']).toBe('test-internal-token-0123456789');
      expect(got.headers['content-length']).toBe(String(body.length));
      expect(got.headers['content-type']).toBe('application/json');
      expect(got.headers['x-request-id']).toBe('trace-123');
      // The gateway's own id travels apart (the audit trail records it): never the client's.
      expect(got.headers['x-service-request-id']).toMatch(/^[0-9a-f-]{36}$/);
      expect(got.headers['x-integrator-id']).toBe('acme');
      expect(got.headers['x-api-key-id']).toBe(key.slice(0, (got.headers['x-api-key-id'] as string).length));
      expect(got.headers['x-api-key-id']).not.toBe('spoofed');
      expect(Object.keys(got.headers).sort()).toEqual(SIGNER_REQUEST_HEADER_NAMES);
      expect(res.headers['x-request-id']).toBe('trace-123');
      expect(res.headers['ratelimit-limit']).toBe('100000');
      if (v1) {
        expect(res.headers.deprecation).toBe('true');
        expect(res.headers.link).toBe('</v2/swap/sign>; rel="successor-version"');
      }
    });

    it('security: the signer gets the declared route path, whatever request target the client wrote', async () => {
      // Node's parser hands the target through as written; the router matches its path part.
      const port = Number(new URL(await h.listen(target())).port);
      const targets = [
        `http://evil.example${path}`,
        `http://evil.example${path}?x=1`,
        `${path}#frag/../x`,
        `${path}?a=1#../../internal`,
      ];
      for (const requestTarget of targets) {
        const head = [
          `POST ${requestTarget} HTTP/1.1`,
          'Host: gateway',
          `X-API-KEY: ${key}`,
          'Content-Type: application/json',
          `Content-Length: ${Buffer.byteLength(BODY)}`,
          'Connection: close',
        ].join('\r\n');
        const ex = await rawExchange(port, `${head}\r\n\r\n${BODY}`);
        const [answer] = parseRawResponses(ex.received).responses;
        expect({ requestTarget, status: answer?.status }).toEqual({ requestTarget, status: 200 });
      }
      expect(signer.requests.map((r) => r.url)).toEqual(targets.map(() => path));
    });

    it('behavior: a chunked upload (no Content-Length) is forwarded with its exact bytes', async () => {
      const { status } = await postChunked(path, [BODY.slice(0, 10), BODY.slice(10)]);
      expect(status).toBe(200);
      expect(signer.requests[0]!.body.toString('utf8')).toBe(BODY);
      expect(signer.requests[0]!.headers['content-length']).toBe(String(Buffer.byteLength(BODY)));
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

    it("error: signer answering but hanging is 503 SERVICE_UNAVAILABLE at the sign's deadline, well before the request timeout", async () => {
      signer.behave({ kind: 'hang' });
      const fast = await h.gateway({ signerUrl: signer.url, requestTimeoutMs: 1_500, signDeadlineMs: 400 });
      const started = Date.now();
      const res = await call(
        request(fast.app).post(path).set('X-API-KEY', key).set('Content-Type', 'application/json').send(BODY),
      );
      const took = Date.now() - started;
      expect(res.status).toBe(503);
      expect(res.headers['retry-after']).toBe('1');
      expect(res.body).toEqual({
        error: {
          code: 'SERVICE_UNAVAILABLE',
          message: 'this sign could not be answered within its deadline; retry shortly',
          requestId: res.headers['x-request-id'],
        },
      });
      // At the deadline: earlier by the loop's delay on a busy machine (counted as spent).
      expect(took).toBeGreaterThanOrEqual(300);
      expect(took).toBeLessThan(1_000);
    });

    it("behavior: the signer is sent what is left of the sign's deadline, never a value the client sent", async () => {
      const res = await call(
        request(target())
          .post(path)
          .set('X-API-KEY', key)
          .set('X-Sign-Budget-Ms', '99999')
          .set('Content-Type', 'application/json')
          .send(BODY),
      );
      expect(res.status).toBe(200);
      const budget = Number(signer.requests[0]!.headers['x-sign-budget-ms']);
      // The harness's SIGN_DEADLINE_MS (5 s), less the few ms (or the loop's delay) spent so far.
      expect(budget).toBeGreaterThan(0);
      expect(budget).toBeLessThanOrEqual(5_000);
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

describe('what the gateway tells the signer', () => {
  it('security: hop-by-hop headers of the client never reach the signer; its own connection stays keep-alive', async () => {
    const base = new URL(await h.listen(gw.app));
    const status = await new Promise<number>((resolve, reject) => {
      const req = httpRequest(
        {
          host: base.hostname,
          port: base.port,
          path: '/v2/swap/sign',
          method: 'POST',
          headers: {
            'X-API-KEY': key,
            'Content-Type': 'application/json',
            Connection: 'close, X-Hop',
            'X-Hop': 'for the next hop only',
            'Keep-Alive': 'timeout=1',
            TE: 'trailers',
            Trailer: 'X-Checksum',
            'Proxy-Authorization': 'Basic c2VjcmV0',
          },
        },
        (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode ?? 0));
        },
      );
      req.on('error', reject);
      req.end(BODY);
    });
    expect(status).toBe(200);
    const got = signer.requests[0]!.headers;
    // Exactly the headers the gateway sets (signer-headers.ts) and Node's client adds: no client header.
    expect(Object.keys(got).sort()).toEqual(SIGNER_REQUEST_HEADER_NAMES);
    // The agent's own: the client's "close" would otherwise end the pooled connection.
    expect(got.connection).toBe('keep-alive');
  });

  it("security: hop-by-hop headers of the signer's answer are not passed on", async () => {
    signer.behave({
      kind: 'status',
      status: 200,
      body: SIGN_OK_BODY,
      headers: { Connection: 'X-Signer-Hop', 'X-Signer-Hop': 'internal', 'Keep-Alive': 'timeout=5' },
    });
    const res = await call(
      request(gw.app).post('/v2/swap/sign').set('X-API-KEY', key).set('Content-Type', 'application/json').send(BODY),
    );
    expect(res.status).toBe(200);
    expect(res.text).toBe(SIGN_OK_BODY);
    expect(res.headers['x-signer-hop']).toBeUndefined();
  });

  it('error: a signer refusing the internal token (another INTERNAL_TOKEN) is 503 to the client, never its 401', async () => {
    const s = await fakeSigner();
    s.refuseToken();
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
      expect(res.headers['www-authenticate']).toBeUndefined();
      const metrics = await request(gw4.opsApp).get('/metrics');
      expect(metrics.text).toMatch(/gateway_upstream_errors_total\{reason="TOKEN_REFUSED"[^}]*\} 1$/m);
    } finally {
      await s.close();
    }
  });

  it('behavior: a 401 about the integrator (no internal-token challenge) is passed on as the signer wrote it', async () => {
    const envelope = JSON.stringify({
      error: { code: 'UNAUTHORIZED', message: 'integrator is disabled', requestId: 'r' },
    });
    signer.behave({ kind: 'status', status: 401, body: envelope });
    const res = await call(
      request(gw.app).post('/v2/swap/sign').set('X-API-KEY', key).set('Content-Type', 'application/json').send(BODY),
    );
    expect(res.status).toBe(401);
    expect(res.text).toBe(envelope);
  });
});

describe('a signer that dies mid-answer', () => {
  it('error: the head sent, the body cut: 503 in the envelope (nothing was passed on yet), and the gateway stays up', async () => {
    const { createServer } = await import('node:net');
    const cutter = createServer((socket) => {
      socket.once('data', () => {
        socket.write('HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"verif');
        setTimeout(() => socket.destroy(), 50);
      });
    });
    await new Promise<void>((r) => cutter.listen(0, '127.0.0.1', r));
    const port = (cutter.address() as import('node:net').AddressInfo).port;
    try {
      const gw6 = await h.gateway({ signerUrl: `http://127.0.0.1:${port}` });
      const send = () =>
        request(gw6.app).post('/v2/swap/sign').set('X-API-KEY', key).set('Content-Type', 'application/json').send(BODY);
      for (let i = 0; i < 3; i++) {
        const res = await send();
        expect(res.status).toBe(503);
        expect(res.body.error).toMatchObject({
          code: 'SERVICE_UNAVAILABLE',
          message: 'signer unavailable, retry shortly',
        });
      }
      expect((await request(gw6.app).get('/healthz')).status).toBe(200);
    } finally {
      cutter.close();
    }
  });
});

describe('a stalled signer', () => {
  it('error: past the in-flight bound a sign is 503 at once; the waiting ones are 503 at the deadline and keep their slots until the signer lets go', async () => {
    signer.behave({ kind: 'hang' });
    const gw5 = await h.gateway({
      signerUrl: signer.url,
      requestTimeoutMs: 1_500,
      signDeadlineMs: 600,
      signerMaxInFlight: 2,
    });
    const send = () =>
      request(gw5.app).post('/v2/swap/sign').set('X-API-KEY', key).set('Content-Type', 'application/json').send(BODY);
    const timed = async () => {
      const started = Date.now();
      const res = await send();
      return { res, ms: Date.now() - started };
    };
    // supertest sends on then(): started now, awaited below.
    const waiting = [timed(), timed()];
    await new Promise((r) => setTimeout(r, 100));
    const refused = await timed();
    expect(refused.res.status).toBe(503);
    expect(refused.res.headers['retry-after']).toBe('1');
    expect(refused.res.body.error).toMatchObject({
      code: 'SERVICE_UNAVAILABLE',
      message: 'over capacity right now; retry shortly',
    });
    expect(refused.ms).toBeLessThan(300);
    // Refused at the door (before the route table), with every header of the public port's answers.
    expect(refused.res.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    expect(refused.res.body.error.requestId).toBe(refused.res.headers['x-request-id']);
    expect(refused.res.headers['x-content-type-options']).toBe('nosniff');
    expect(refused.res.headers['content-security-policy']).toBe("default-src 'none';frame-ancestors 'none'");
    expect(refused.res.headers['content-type']).toBe('application/json; charset=utf-8');
    const v1 = await request(gw5.app)
      .post('/v1/swap/sign')
      .set('X-API-KEY', key)
      .set('X-Request-Id', 'mine-1')
      .set('Content-Type', 'application/json')
      .send(BODY);
    expect([v1.status, v1.headers['x-request-id'], v1.body.error.requestId, v1.headers.deprecation]).toEqual([
      503,
      'mine-1',
      'mine-1',
      'true',
    ]);
    expect(v1.body.error.message).toBe('over capacity right now; retry shortly');
    // At the door nothing of the request is looked at: a wrong key is refused for capacity too. A
    // browser's request (Origin) takes the route table's way (its CORS headers): there, 401.
    const wrongKey = () =>
      request(gw5.app).post('/v2/swap/sign').set('X-API-KEY', 'pmm_wrong').set('Content-Type', 'application/json');
    expect((await wrongKey().send(BODY)).status).toBe(503);
    expect((await wrongKey().set('Origin', 'https://app.example').send(BODY)).status).toBe(401);
    for (const { res, ms } of await Promise.all(waiting)) {
      expect(res.status).toBe(503);
      expect(res.headers['retry-after']).toBe('1');
      expect(res.body.error.message).toBe('this sign could not be answered within its deadline; retry shortly');
      // At the deadline (earlier by the loop's delay on a busy machine, counted as spent).
      expect(ms).toBeGreaterThanOrEqual(500);
      expect(ms).toBeLessThan(1_200);
    }
    // The stalled signer still holds both requests: the bound is still full.
    expect((await timed()).res.body.error.message).toBe('over capacity right now; retry shortly');
    const metrics = (await request(gw5.opsApp).get('/metrics')).text;
    expect(metrics).toMatch(/^gateway_overload_refusals_total\{reason="in_flight"[^}]*\} 4$/m);
    // The door's refusals are among the route's 503s.
    expect(metrics).toMatch(/^http_requests_total\{method="POST",route="\/v1\/swap\/sign",code="503"[^}]*\} 1$/m);
    expect(metrics).toMatch(/^gateway_deadline_refusals_total\{reason="signer"[^}]*\} 2$/m);
    expect(metrics).toMatch(/^gateway_sign_in_flight_limit\{[^}]*\} 2$/m);
    expect(metrics).toMatch(/^gateway_sign_in_flight\{[^}]*\} 2$/m);
    // The requests the signer never answers are given up at the request timeout: the bound frees,
    // and the next sign reaches the signer again.
    signer.behave({ kind: 'ok' });
    await new Promise((r) => setTimeout(r, 1_500));
    expect((await send()).status).toBe(200);
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
