/**
 * The gateway → signer hop under a hostile client, from raw sockets, through the real gateway to
 * the real signer (each its own process, as `npm start` runs them: support/served-pair.ts). A
 * relay between the two keeps every byte the gateway sent, so the test reads exactly what
 * reached the signer.
 *
 * Pinned: whatever the client sends (Expect: 100-continue with the body at once, after the 100 or
 * never; Content-Length with Transfer-Encoding; two Content-Lengths; obs-fold; pipelined requests;
 * the internal headers in any case; bodies that hold an HTTP request; oversized and slow bodies):
 * - every answer is in the envelope (or a signed quote), never a 5xx but the signer's absence;
 * - what reached the signer is only well-framed `POST /v2|v1/swap/sign` requests carrying exactly
 *   the gateway's own header set, the gateway's token, and no client header;
 * - no answer reaches the wrong client, and every audit record names the key that asked;
 * then 1,000 concurrent signs against a stalled signer (every pooled socket busy, the rest
 * queued): every answer 503 in the envelope, the gateway up, signing back once the signer is.
 */
import { request as httpRequest, Agent } from 'node:http';
import { ERROR_STATUS, SIGNER_ACCESS_PATH } from '@pmm/protocol';
import { AUDIT_ENTRY_FIELD, createRedis, parseAuditRecord, redisKeys, redisReady, type RedisClient } from '@pmm/core';
import { ApiKeyStore, SIGNER_REQUEST_HEADER_NAMES } from '@pmm/gateway';
import { parseRawResponses, rawExchange, until, type RawResponse, type RawStep } from '@pmm/testkit';
import { INTEGRATOR, USER, startServedPair, tokensOf, type ServedPair } from './support/served-pair';
import { parseRelayedRequests, recordingRelay, type RecordingRelay } from './support/recording-relay';

/** Longer than the default test timeouts so that a loaded machine still parses 1,000 connections' heads in time. */
const REQUEST_TIMEOUT_MS = 3_000;

let pair: ServedPair;
let relay: RecordingRelay;
let redis: RedisClient;
let other: { apiKey: string; keyId: string };
let signerPort = 0;
/** The relay's connections opened while the pair started: the gateway's readiness checks. */
let startupConnections = 0;
/** Request id → the key id that sent it, for every request whose answer was a 200. */
const signedBy = new Map<string, string>();

const { quote, bases } = tokensOf(8453);
const body = (extra: Record<string, unknown> = {}) =>
  JSON.stringify({ chainId: 8453, tokenIn: quote, tokenOut: bases[0], fee: '30', userAddress: USER, ...extra });

let seq = 0;
/** A sign request's bytes: head (with `extra` header lines) and body; its request id is returned. */
function signRequest(opts: { key?: string; extraHeaders?: string[]; payload?: string; length?: number } = {}) {
  const id = `hop-${++seq}`;
  const payload = opts.payload ?? body();
  const head = [
    'POST /v2/swap/sign HTTP/1.1',
    'Host: gateway',
    `X-API-KEY: ${opts.key ?? pair.apiKey}`,
    `X-Request-Id: ${id}`,
    'Content-Type: application/json',
    ...(opts.length === -1 ? [] : [`Content-Length: ${opts.length ?? Buffer.byteLength(payload)}`]),
    ...(opts.extraHeaders ?? []),
  ].join('\r\n');
  return { id, head: `${head}\r\n\r\n`, payload };
}

/**
 * Plays `steps` on one connection and returns the answers. The connection stays open (a client's
 * FIN would abort its requests in flight): the exchange ends with the steps' last wait.
 */
async function exchange(steps: RawStep[]): Promise<RawResponse[]> {
  const timeoutMs = steps.reduce((sum, step) => sum + (step.waitMs ?? 0), 100);
  const { received } = await rawExchange(pair.gatewayPort, steps, { timeoutMs });
  return parseRawResponses(received).responses;
}

/** Checks an answer: a 200 signed quote for `id`, or an error in the envelope with its status. */
function checkAnswer(res: RawResponse, id?: string, key = pair.keyId): void {
  const json = JSON.parse(res.body.toString('utf8'));
  if (res.status === 200) {
    expect(typeof json.verificationData).toBe('string');
    expect(res.headers['x-request-id']).toBe(id);
    signedBy.set(id!, key);
    return;
  }
  expect(Object.keys(json)).toEqual(['error']);
  expect(ERROR_STATUS[json.error.code as keyof typeof ERROR_STATUS]).toBe(res.status);
  expect(json.error.requestId).toBe(res.headers['x-request-id']);
}

const interim = (responses: RawResponse[]) => responses.filter((r) => r.status < 200);
const finals = (responses: RawResponse[]) => responses.filter((r) => r.status >= 200);

beforeAll(async () => {
  relay = await recordingRelay(() => signerPort);
  pair = await startServedPair({
    requestTimeoutMs: REQUEST_TIMEOUT_MS,
    relay: { url: relay.url, to: (signerUrl) => (signerPort = Number(new URL(signerUrl).port)) },
  });
  startupConnections = relay.streams().length;
  // The records' server: integrators, their keys and the audit trail.
  redis = createRedis(pair.redisRecordsUrl, { name: 'hop-test' });
  await redisReady(redis);
  const store = new ApiKeyStore(redis, pair.prefix);
  await store.putIntegrator({
    id: 'other',
    name: 'other',
    whitelist: [USER],
    chains: [],
    rateLimit: { requests: 1_000_000, windowSeconds: 60 },
    disabled: false,
  });
  const issued = await store.issueKey('other');
  other = { apiKey: issued.apiKey, keyId: issued.record.keyId };
});
afterAll(async () => {
  redis?.disconnect();
  await pair?.close();
  await relay?.close();
});

describe('Expect: 100-continue is answered by the gateway and never reaches the signer', () => {
  it('security: the body sent with the head: 100 then the signed quote', async () => {
    const r = signRequest({ extraHeaders: ['Expect: 100-continue'] });
    const answers = await exchange([{ data: r.head + r.payload, waitMs: 500 }]);
    expect(interim(answers).map((a) => a.status)).toEqual([100]);
    expect(finals(answers)).toHaveLength(1);
    expect(finals(answers)[0]!.status).toBe(200);
    checkAnswer(finals(answers)[0]!, r.id);
  });

  it('security: the body sent after the 100: the signed quote', async () => {
    const r = signRequest({ extraHeaders: ['Expect: 100-continue'] });
    const answers = await exchange([
      { data: r.head, waitMs: 200 },
      { data: r.payload, waitMs: 500 },
    ]);
    expect(interim(answers).map((a) => a.status)).toEqual([100]);
    expect(finals(answers)[0]!.status).toBe(200);
    checkAnswer(finals(answers)[0]!, r.id);
  });

  it('security: the body never sent: 408 REQUEST_TIMEOUT in the envelope, and the next signs are unharmed', async () => {
    const r = signRequest({ extraHeaders: ['Expect: 100-continue'] });
    const answers = await exchange([{ data: r.head, waitMs: REQUEST_TIMEOUT_MS + 1_000 }]);
    const last = finals(answers);
    expect(last).toHaveLength(1);
    expect(last[0]!.status).toBe(408);
    checkAnswer(last[0]!);
    // Many signs at once, over every pooled connection to the signer: each one's own quote.
    const batch = Array.from({ length: 20 }, () => signRequest());
    const all = await Promise.all(batch.map((b) => exchange([{ data: b.head + b.payload, waitMs: 800 }])));
    all.forEach((a, i) => {
      expect(finals(a)[0]!.status).toBe(200);
      checkAnswer(finals(a)[0]!, batch[i]!.id);
    });
  });
});

describe('framing the parser refuses: answered by the gateway, nothing forwarded', () => {
  it.each([
    ['Content-Length with Transfer-Encoding', { extraHeaders: ['Transfer-Encoding: chunked'] }],
    ['two Content-Lengths', { extraHeaders: ['Content-Length: 3'] }],
    ['an obs-fold continuation line', { extraHeaders: ['X-Folded: a', ' folded'] }],
  ])('security: %s is 400 in the envelope', async (_name, opts) => {
    const r = signRequest(opts);
    const answers = await exchange([{ data: r.head + r.payload, waitMs: 300 }]);
    expect(answers.length).toBeGreaterThanOrEqual(1);
    expect(answers[0]!.status).toBe(400);
    checkAnswer(answers[0]!);
  });
});

describe('what a client controls never steers the hop', () => {
  it('security: pipelined requests of two keys on one connection: each answer in order, each recorded under its key', async () => {
    const a = signRequest();
    const b = signRequest({ key: other.apiKey });
    const c = signRequest();
    const answers = await exchange([
      { data: a.head + a.payload + b.head + b.payload + c.head + c.payload, waitMs: 1_000 },
    ]);
    expect(answers.map((x) => x.status)).toEqual([200, 200, 200]);
    checkAnswer(answers[0]!, a.id);
    checkAnswer(answers[1]!, b.id, other.keyId);
    checkAnswer(answers[2]!, c.id);
  });

  it('security: the internal headers sent by the client, in any case, are replaced by the gateway’s own', async () => {
    const r = signRequest({
      key: other.apiKey,
      extraHeaders: [
        'X-INTERNAL-TOKEN: forged',
        'x-Integrator-Id: fuzz',
        'X-Api-Key-ID: forged-key',
        'x-service-request-id: forged-id',
        'Content-Encoding: identity',
        'Connection: keep-alive, X-Hop',
        'X-Hop: 1',
        'Keep-Alive: timeout=1',
        'Upgrade: h2c',
        'X-Forwarded-For: 10.0.0.1',
        'Proxy-Authorization: Basic eA==',
      ],
    });
    const answers = await exchange([{ data: r.head + r.payload, waitMs: 600 }]);
    expect(answers[0]!.status).toBe(200);
    checkAnswer(answers[0]!, r.id, other.keyId);
  });

  it('security: a body holding an HTTP request reaches the signer only as the body', async () => {
    const smuggled =
      'GET /metrics HTTP/1.1\r\nHost: signer\r\nX-Internal-Token: forged\r\n\r\n' +
      'POST /internal/access HTTP/1.1\r\nHost: signer\r\nContent-Length: 0\r\n\r\n';
    // Inside the JSON: the signer refuses the body (unknown field), nothing else happens.
    const inside = signRequest({ payload: body({ note: smuggled }) });
    // After a Content-Length that ends the body early: the rest is the client's next request on
    // its own connection, answered by the gateway (404 on the public port).
    const payload = body();
    const after = signRequest({ payload: payload + smuggled, length: Buffer.byteLength(payload) });
    const answers = [
      ...(await exchange([{ data: inside.head + inside.payload, waitMs: 600 }])),
      ...(await exchange([{ data: after.head + after.payload, waitMs: 800 }])),
    ];
    expect(answers.map((x) => x.status)).toEqual([400, 200, 404, 404]);
    checkAnswer(answers[0]!);
    checkAnswer(answers[1]!, after.id);
    for (const x of answers.slice(2)) checkAnswer(x);
  });

  it('error: an oversized body is 413, a slow one within the timeout is signed, a slower one is 408', async () => {
    const big = signRequest({ payload: body({ pad: 'x'.repeat(17 * 1024) }) });
    const [tooLarge] = await exchange([{ data: big.head + big.payload, waitMs: 500 }]);
    expect(tooLarge!.status).toBe(413);
    checkAnswer(tooLarge!);

    const slow = signRequest();
    const pieces = slow.payload.match(/.{1,20}/g)!;
    const [signed] = await exchange([
      { data: slow.head },
      ...pieces.map((p) => ({ data: p, waitMs: 50 })),
      { waitMs: 800 },
    ]);
    expect(signed!.status).toBe(200);
    checkAnswer(signed!, slow.id);

    const slower = signRequest();
    const [late] = await exchange([
      { data: slower.head + slower.payload.slice(0, 10), waitMs: REQUEST_TIMEOUT_MS + 800 },
      { data: slower.payload.slice(10), waitMs: 300 },
    ]);
    expect(late!.status).toBe(408);
    checkAnswer(late!);
  });
});

describe('what reached the signer', () => {
  it('security: only well-framed sign requests with exactly the gateway’s headers, and every signature recorded under the key that asked', async () => {
    const streams = relay.streams();
    // Before the first client request: the gateway's readiness checks of the signer, and nothing else.
    const startup = streams.slice(0, startupConnections).flatMap(parseRelayedRequests);
    expect(startup.length).toBeGreaterThan(0);
    for (const r of startup) {
      expect(r.requestLine).toBe(`GET ${SIGNER_ACCESS_PATH} HTTP/1.1`);
      expect(r.headers['x-internal-token']).toBe(pair.internalToken);
    }
    const requests = streams.slice(startupConnections).flatMap(parseRelayedRequests);
    expect(requests.length).toBeGreaterThan(0);
    for (const r of requests) {
      expect(r.requestLine).toMatch(/^POST \/v[12]\/swap\/sign HTTP\/1\.1$/);
      const names = r.names.filter((n) => n !== 'content-encoding').sort();
      expect(names).toEqual(SIGNER_REQUEST_HEADER_NAMES);
      expect(r.headers['x-internal-token']).toBe(pair.internalToken);
      expect(r.headers['content-length']).toBe(String(r.body.length));
      expect(JSON.parse(r.body.toString('utf8'))).toEqual(expect.any(Object));
    }
    const entries = (await redis.xrange(redisKeys(pair.prefix).audit(8453), '-', '+')) as [string, string[]][];
    const records = entries.map(([, fields]) => parseAuditRecord(fields[fields.indexOf(AUDIT_ENTRY_FIELD) + 1]!));
    const recorded = new Map(records.map((r) => [r.clientRequestId, r]));
    expect(records).toHaveLength(signedBy.size);
    for (const [id, keyId] of signedBy) {
      const record = recorded.get(id);
      expect(record).toBeDefined();
      expect(record!.keyId).toBe(keyId);
      expect(record!.integratorId).toBe(keyId === other.keyId ? 'other' : INTEGRATOR);
      expect(record!.requestId).toMatch(/^[0-9a-f-]{36}$/);
    }
  });
});

describe('a stalled signer, every pooled socket busy', () => {
  it('error: 1,000 concurrent signs are each 503 in the envelope; the gateway stays up and signs again once the signer is back', async () => {
    relay.stall(true);
    const agent = new Agent({ keepAlive: false, maxSockets: Infinity });
    const post = (payload: string) =>
      new Promise<{ status: number; text: string; id: string }>((resolve, reject) => {
        const req = httpRequest(
          {
            host: '127.0.0.1',
            port: pair.gatewayPort,
            path: '/v2/swap/sign',
            method: 'POST',
            agent,
            headers: { 'X-API-KEY': pair.apiKey, 'Content-Type': 'application/json' },
          },
          (res) => {
            let text = '';
            res.on('data', (d: Buffer) => (text += d.toString('utf8')));
            res.on('end', () =>
              resolve({ status: res.statusCode ?? 0, text, id: String(res.headers['x-request-id']) }),
            );
          },
        );
        req.on('error', reject);
        req.end(payload);
      });
    try {
      const answers = await Promise.all(Array.from({ length: 1_000 }, () => post(body())));
      for (const a of answers) {
        expect(a.status).toBe(503);
        expect(JSON.parse(a.text)).toEqual({
          error: { code: 'SERVICE_UNAVAILABLE', message: expect.any(String), requestId: a.id },
        });
      }
    } finally {
      relay.stall(false);
    }
    // Still up, and the pool recovers: a fresh sign goes through. Asked until it does (each
    // attempt a new request): one attempt of a second missed its answer on a machine at a load
    // average of 24, where the gateway had signed again, later.
    let back: RawResponse | undefined;
    await until(
      async () => {
        const r = signRequest();
        [back] = await exchange([{ data: r.head + r.payload, waitMs: 2_000 }]);
        return back?.status === 200;
      },
      30_000,
      'a sign answered 200 once the signer is back',
      0,
    );
    expect(back!.status).toBe(200);
    agent.destroy();
  }, 60_000);
});
