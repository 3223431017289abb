/**
 * PmmClient's failure policy against a real local HTTP server that answers what each test
 * scripts: 429/503 retried after Retry-After (seconds and HTTP-date) or a backoff, bounded
 * attempts, other errors final, the per-call deadline, the caller's AbortSignal, and the
 * RateLimit-* figures.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PmmClient, type PmmApiError } from '@pmm/client';

type Answer = (req: IncomingMessage, res: ServerResponse) => void;
let server: Server;
let base: string;
let script: Answer[] = [];
const seen: { at: number; method: string; body: string }[] = [];

const envelope = (code: string) => JSON.stringify({ error: { code, message: code.toLowerCase(), requestId: 'r1' } });
const reply =
  (status: number, body: string, headers: Record<string, string> = {}): Answer =>
  (_req, res) => {
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(body);
  };
const BOOK = JSON.stringify({ chainId: 56, blockNumber: 7, blockTime: 1, pairs: [] });
const limits = (remaining: number) => ({
  'RateLimit-Limit': '10',
  'RateLimit-Remaining': String(remaining),
  'RateLimit-Reset': '30',
});

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += String(d)));
    req.on('end', () => {
      seen.push({ at: Date.now(), method: req.method ?? '', body });
      const next = script.shift() ?? reply(500, envelope('INTERNAL_ERROR'));
      next(req, res);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});
beforeEach(() => {
  script = [];
  seen.length = 0;
});

const client = (opts: Partial<ConstructorParameters<typeof PmmClient>[0]> = {}) =>
  new PmmClient({ baseUrl: base, apiKey: 'k', retry: { minDelayMs: 20, maxDelayMs: 40 }, ...opts });
const failure = (p: Promise<unknown>) =>
  p.then(
    () => {
      throw new Error('expected a rejection');
    },
    (e: PmmApiError) => e,
  );

describe('PmmClient retries', () => {
  it('behavior: a 503 with Retry-After: 1 is asked again after one second, then the book is returned', async () => {
    script = [reply(503, envelope('SERVICE_UNAVAILABLE'), { 'Retry-After': '1' }), reply(200, BOOK)];
    const book = await client().getOrderbook(56);
    expect(book.blockNumber).toBe(7);
    expect(seen).toHaveLength(2);
    expect(seen[1]!.at - seen[0]!.at).toBeGreaterThanOrEqual(950);
  });

  it('behavior: a 429 with an HTTP-date Retry-After waits until that date', async () => {
    const when = new Date(Math.ceil((Date.now() + 1_500) / 1_000) * 1_000);
    script = [reply(429, envelope('RATE_LIMITED'), { 'Retry-After': when.toUTCString() }), reply(200, BOOK)];
    await client().getOrderbook(56);
    expect(seen[1]!.at).toBeGreaterThanOrEqual(when.getTime() - 50);
  });

  it('behavior: without Retry-After it backs off and gives up after the configured attempts with the last error', async () => {
    script = [0, 1, 2].map(() => reply(503, envelope('SERVICE_UNAVAILABLE')));
    const err = await failure(client().getOrderbook(56));
    expect(err).toMatchObject({ status: 503, code: 'SERVICE_UNAVAILABLE', requestId: 'r1' });
    expect(seen).toHaveLength(3);
    script = [0, 1].map(() => reply(429, envelope('RATE_LIMITED')));
    await failure(client({ retry: { attempts: 2, minDelayMs: 1 } }).getOrderbook(56));
    expect(seen).toHaveLength(5);
  });

  it('behavior: the sign call is retried too, with the same body', async () => {
    script = [
      reply(503, envelope('SERVICE_UNAVAILABLE'), { 'Retry-After': '0' }),
      reply(200, '{"verificationData":"0x","timestamp":1,"deadline":9999999999}'),
    ];
    const req = { chainId: 56, tokenIn: '0x1', tokenOut: '0x2', fee: 10, userAddress: '0x3' };
    await client().signSwap(req);
    expect(seen.map((s) => s.method)).toEqual(['POST', 'POST']);
    expect(seen[1]!.body).toBe(seen[0]!.body);
  });

  it('error: a 503 HALTED is final (asked once), with its code and Retry-After', async () => {
    script = [reply(503, envelope('HALTED'), { 'Retry-After': '0' }), reply(200, BOOK)];
    const req = { chainId: 56, tokenIn: '0x1', tokenOut: '0x2', fee: 10, userAddress: '0x3' };
    expect(await failure(client().signSwap(req))).toMatchObject({ status: 503, code: 'HALTED', retryAfterMs: 0 });
    expect(seen).toHaveLength(1);
  });

  it('error: a 400, 401, 422 or 500 is final (asked once)', async () => {
    for (const [status, code] of [
      [400, 'UNSUPPORTED_CHAIN'],
      [401, 'UNAUTHORIZED'],
      [422, 'VALIDATION_ERROR'],
      [500, 'INTERNAL_ERROR'],
    ] as const) {
      seen.length = 0;
      script = [reply(status, envelope(code)), reply(200, BOOK)];
      expect(await failure(client().getOrderbook(56))).toMatchObject({ status, code });
      expect(seen).toHaveLength(1);
    }
  });

  it('error: an answer that is not JSON is BAD_RESPONSE; a proxy page keeps its status and Retry-After', async () => {
    const page = '<html>bad gateway</html>';
    script = [reply(503, page, { 'content-type': 'text/html', 'Retry-After': '0' }), reply(502, page)];
    expect(await failure(client().getOrderbook(56))).toMatchObject({
      status: 502,
      code: 'BAD_RESPONSE',
      message: 'BAD_RESPONSE: HTTP 502',
    });
    expect(seen).toHaveLength(2);

    script = [reply(200, 'not json')];
    expect(await failure(client().getOrderbook(56))).toMatchObject({ status: 200, code: 'BAD_RESPONSE' });
  });

  it('behavior: a Retry-After beyond the call deadline is not waited for: the 429 is thrown at once', async () => {
    script = [reply(429, envelope('RATE_LIMITED'), { 'Retry-After': '30' })];
    const started = Date.now();
    const err = await failure(client({ timeoutMs: 2_000 }).getOrderbook(56));
    expect(err).toMatchObject({ status: 429, code: 'RATE_LIMITED', retryAfterMs: 30_000 });
    expect(Date.now() - started).toBeLessThan(1_000);
  });
});

describe('PmmClient timeout and abort', () => {
  const hang: Answer = () => undefined; // never answers (closed at afterAll)

  it('error: no answer within the per-call timeout is TIMEOUT, after about that long', async () => {
    script = [hang];
    const started = Date.now();
    const err = await failure(client().getOrderbook(56, { timeoutMs: 300 }));
    expect(err).toMatchObject({ status: 0, code: 'TIMEOUT' });
    expect(Date.now() - started).toBeGreaterThanOrEqual(290);
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it('error: the caller aborting stops the request in flight (ABORTED)', async () => {
    script = [hang];
    const controller = new AbortController();
    const call = failure(client().getOrderbook(56, { signal: controller.signal }));
    setTimeout(() => controller.abort(), 100);
    expect(await call).toMatchObject({ code: 'ABORTED' });
  });

  it('error: aborting during the wait before a retry stops the retries', async () => {
    script = [reply(503, envelope('SERVICE_UNAVAILABLE'), { 'Retry-After': '5' }), reply(200, BOOK)];
    const controller = new AbortController();
    const started = Date.now();
    const call = failure(client().getOrderbook(56, { signal: controller.signal }));
    setTimeout(() => controller.abort(), 200);
    expect(await call).toMatchObject({ code: 'ABORTED' });
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(seen).toHaveLength(1);
  });

  it('error: an already aborted signal sends nothing', async () => {
    const err = await failure(client().getOrderbook(56, { signal: AbortSignal.abort() }));
    expect(err).toMatchObject({ code: 'ABORTED' });
    expect(seen).toHaveLength(0);
  });

  it('error: nothing listening is NETWORK_ERROR after the attempts', async () => {
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', () => r()));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((r) => closed.close(r));
    const err = await failure(new PmmClient({ baseUrl: `http://127.0.0.1:${port}`, apiKey: 'k' }).getOrderbook(56));
    expect(err).toMatchObject({ status: 0, code: 'NETWORK_ERROR' });
  });
});

describe('PmmClient rate-limit figures', () => {
  it('behavior: lastRateLimit follows the latest answer, a refused one included; errors carry theirs', async () => {
    const c = client({ retry: { attempts: 1 } });
    expect(c.lastRateLimit).toBeUndefined();
    script = [reply(200, BOOK, limits(9))];
    await c.getOrderbook(56);
    expect(c.lastRateLimit).toMatchObject({ limit: 10, remaining: 9, resetSeconds: 30 });
    script = [reply(429, envelope('RATE_LIMITED'), { ...limits(0), 'Retry-After': '30' })];
    const err = await failure(c.getOrderbook(56));
    expect(err.rateLimit).toMatchObject({ limit: 10, remaining: 0, resetSeconds: 30 });
    expect(c.lastRateLimit).toMatchObject({ remaining: 0 });
    script = [reply(200, BOOK)]; // an answer without the headers keeps the last figures
    await c.getOrderbook(56);
    expect(c.lastRateLimit).toMatchObject({ remaining: 0 });
  });
});
