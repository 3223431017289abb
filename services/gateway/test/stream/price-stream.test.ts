/**
 * GET /v2/price/stream against a real Redis: errors before the stream, the book at once and
 * on every new block (the exact /v2/price bytes), `unavailable` and resumption, Last-Event-ID,
 * keep-alive comments, a slow client skipping to the latest book, the per-key limit across
 * replicas, one Redis subscription per gateway, metrics, and closing on shutdown.
 */
import request from 'supertest';
import { settlesWithin, until } from '@pmm/testkit';
import type { Gateway } from '@pmm/gateway';
import { bookBody, call, harness, hashApiKey, type Harness } from '../support/harness';
import { openStream, type SseStream } from '../support/sse-client';
import { KEY_RECHECK_MS } from '../../src/stream/price-stream';

let h: Harness;
let gw: Gateway;
let base: string;
let key: string;
const open: SseStream[] = [];

beforeAll(async () => {
  h = await harness();
  gw = await h.gateway({ streamHeartbeatMs: 200 });
  base = await h.listen(gw.app);
  key = await h.apiKey();
});
afterEach(() => {
  for (const s of open.splice(0)) s.close();
});
afterAll(() => h.cleanup());

async function stream(query = '', headers: Record<string, string> = {}, at = base): Promise<SseStream> {
  const s = await openStream(at, `/v2/price/stream${query}`, { 'X-API-KEY': key, ...headers });
  open.push(s);
  return s;
}

const envelope = (code: string, message: string, requestId: unknown) => ({ error: { code, message, requestId } });

describe('GET /v2/price/stream: before the stream', () => {
  const get = (query: string, headers: Record<string, string> = { 'X-API-KEY': key }) =>
    call(request(gw.app).get(`/v2/price/stream${query}`).set(headers));

  it('error: no API key is 401 in the envelope', async () => {
    const res = await get('', {});
    expect(res.status).toBe(401);
    expect(res.body).toEqual(
      envelope('UNAUTHORIZED', 'X-API-KEY: missing API key header', res.headers['x-request-id']),
    );
  });

  it.each([
    ['?chainId=abc', 422, 'VALIDATION_ERROR', 'chainId: must be a base-10 unsigned integer (ASCII digits only)'],
    ['?chainId=1', 400, 'UNSUPPORTED_CHAIN', 'chainId: 1 is not a supported chain (supported: 8453, 56, 4663)'],
    ['?chainid=56', 400, 'UNSUPPORTED_FIELD', 'chainid: unsupported query parameter (only chainId is defined)'],
  ])('error: %s is %d %s', async (query, status, code, message) => {
    const res = await get(query);
    expect(res.status).toBe(status);
    expect(res.body.error.code).toBe(code);
    if (code !== 'UNSUPPORTED_CHAIN') expect(res.body.error.message).toBe(message);
  });

  it('error: a chain the key is not enabled for is 400 UNSUPPORTED_CHAIN', async () => {
    const k = await h.apiKey({ chains: [56] });
    const res = await get('?chainId=8453', { 'X-API-KEY': k });
    expect(res.status).toBe(400);
    expect(res.body).toEqual(
      envelope('UNSUPPORTED_CHAIN', 'chainId: 8453 is not enabled for this API key', res.headers['x-request-id']),
    );
  });

  it.each(['abc', '-1', '1.5', '99999999999999999'])('error: Last-Event-ID %s is 422', async (id) => {
    const res = await get('', { 'X-API-KEY': key, 'Last-Event-ID': id });
    expect(res.status).toBe(422);
    expect(res.body).toEqual(
      envelope(
        'VALIDATION_ERROR',
        'Last-Event-ID: must be the id of an event of this stream',
        res.headers['x-request-id'],
      ),
    );
  });

  it('error: over the rate limit is 429 with Retry-After (the stream spends one request)', async () => {
    const k = await h.apiKey({ rateLimit: { requests: 1, windowSeconds: 60 } });
    await h.putBook(8453, bookBody(8453, 5));
    const first = await stream('', { 'X-API-KEY': k });
    expect(first.status).toBe(200);
    const res = await get('', { 'X-API-KEY': k });
    expect(res.status).toBe(429);
    expect(res.body.error.code).toBe('RATE_LIMITED');
    expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
  });

  it('behavior: HEAD answers the stream headers and ends (no slot taken)', async () => {
    const k = await h.apiKey();
    for (let i = 0; i < 12; i++) {
      const res = await call(request(gw.app).head('/v2/price/stream').set('X-API-KEY', k));
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toBe('text/event-stream; charset=utf-8');
    }
    const keyId = (await h.store.lookupHash(hashApiKey(k)))!.key.keyId;
    expect(await h.redis.exists(h.keys.streamSlots(keyId))).toBe(0);
  });

  it('error: POST is 405 with Allow', async () => {
    const res = await call(request(gw.app).post('/v2/price/stream').set('X-API-KEY', key));
    expect(res.status).toBe(405);
    expect(res.headers.allow).toBe('GET, HEAD');
  });
});

describe('GET /v2/price/stream: the stream', () => {
  it('behavior: the current book at once, then each new book; data is the exact /v2/price body', async () => {
    // Unusual formatting on purpose: the stream must not re-serialise.
    const first = await h.putBook(56, `{"chainId":56,"blockNumber":40,"blockTime":1767225640,"pairs":[] }`);
    const s = await stream('?chainId=56');
    expect(s.status).toBe(200);
    expect(s.headers['content-type']).toBe('text/event-stream; charset=utf-8');
    expect(s.headers['cache-control']).toBe('no-store');
    expect(s.headers['x-request-id']).toBeDefined();
    expect(s.headers['ratelimit-limit']).toBeDefined();
    await s.waitFor(1);
    expect(s.events[0]).toEqual({ event: 'book', id: '40', data: first });
    const price = await request(gw.app).get('/v2/price?chainId=56').set('X-API-KEY', key);
    expect(s.events[0]!.data).toBe(price.text);

    const second = await h.putBook(56, bookBody(56, 41));
    await s.waitFor(2);
    expect(s.events[1]).toEqual({ event: 'book', id: '41', data: second });
  });

  it('behavior: never an older block; the same block is not sent twice', async () => {
    await h.putBook(4663, bookBody(4663, 70));
    const s = await stream('?chainId=4663');
    await s.waitFor(1);
    await h.putBook(4663, bookBody(4663, 69));
    await h.putBook(4663, bookBody(4663, 70));
    await h.putBook(4663, bookBody(4663, 72));
    await s.waitFor(2);
    await new Promise((r) => setTimeout(r, 300));
    expect(s.events.map((e) => e.id)).toEqual(['70', '72']);
  });

  it('behavior: unavailable (envelope with the stream request id) when the book goes, books again when it is back', async () => {
    await h.putBook(8453, bookBody(8453, 200));
    const s = await stream('?chainId=8453');
    await s.waitFor(1);
    await h.dropBook(8453);
    await s.waitFor(2);
    expect(s.events[1]!.event).toBe('unavailable');
    expect(s.events[1]!.id).toBeUndefined();
    expect(JSON.parse(s.events[1]!.data)).toEqual(
      envelope('SERVICE_UNAVAILABLE', 'chainId: 8453 has no live orderbook, retry shortly', s.headers['x-request-id']),
    );
    // The same block back after `unavailable` is sent again (the client dropped its book); older never.
    await h.putBook(8453, bookBody(8453, 199));
    await h.putBook(8453, bookBody(8453, 200));
    await s.waitFor(3);
    await h.putBook(8453, bookBody(8453, 201));
    await s.waitFor(4);
    expect(s.events.map((e) => `${e.event}:${e.id ?? ''}`)).toEqual([
      'book:200',
      'unavailable:',
      'book:200',
      'book:201',
    ]);
  });

  it('behavior: a book that expires without a notice is reported unavailable within about a second', async () => {
    await h.putBook(8453, bookBody(8453, 300));
    const s = await stream('?chainId=8453');
    await s.waitFor(1);
    await h.redis.del(h.keys.book(8453)); // no publish, as when the key's TTL runs out
    await s.waitFor(2, 3_000);
    expect(s.events[1]!.event).toBe('unavailable');
  });

  it('behavior: connecting while there is no book sends unavailable at once', async () => {
    await h.dropBook(56);
    const s = await stream('?chainId=56');
    await s.waitFor(1);
    expect(s.events[0]!.event).toBe('unavailable');
  });

  it('behavior: Last-Event-ID gets the current book only when it is newer', async () => {
    await h.putBook(8453, bookBody(8453, 400));
    const same = await stream('?chainId=8453', { 'Last-Event-ID': '400' });
    const older = await stream('?chainId=8453', { 'Last-Event-ID': '399' });
    await older.waitFor(1);
    expect(older.events[0]!.id).toBe('400');
    await same.until((s) => s.comments.length > 0, 2_000); // a keep-alive came, no book
    expect(same.events).toEqual([]);
    await h.putBook(8453, bookBody(8453, 401));
    await same.waitFor(1);
    expect(same.events[0]!.id).toBe('401');
  });

  it('behavior: a comment line keeps an idle stream open (STREAM_HEARTBEAT_MS)', async () => {
    await h.putBook(8453, bookBody(8453, 500));
    const s = await stream('?chainId=8453');
    await s.until((x) => x.comments.length >= 2, 2_000);
    expect(s.comments[0]).toBe('keep-alive');
  });

  it('behavior: a client that does not read skips to the latest book (no unbounded buffer)', async () => {
    const big = (n: number) =>
      bookBody(8453, n, [{ baseToken: '0x4200000000000000000000000000000000000006', pad: 'x'.repeat(1 << 20) }]);
    await h.putBook(8453, big(1000));
    const s = await stream('?chainId=8453');
    await s.waitFor(1);
    s.pause();
    const skippedBefore = await metric('gateway_stream_books_skipped_total');
    for (let n = 1001; n <= 1030; n++) await h.putBook(8453, big(n));
    s.resume();
    await s.until((x) => x.events.at(-1)?.id === '1030', 15_000);
    const ids = s.events.map((e) => Number(e.id));
    // Far fewer than the 31 books written reached the client, in order, ending at the latest.
    expect(ids.length).toBeLessThan(20);
    expect([...ids].sort((a, b) => a - b)).toEqual(ids);
    expect(await metric('gateway_stream_books_skipped_total')).toBeGreaterThan(skippedBefore);
  }, 60_000);

  it('behavior: many streams share one Redis subscription; /metrics counts open streams and events', async () => {
    await h.putBook(8453, bookBody(8453, 600));
    const streams = await Promise.all(Array.from({ length: 8 }, () => stream('?chainId=8453')));
    await Promise.all(streams.map((s) => s.waitFor(1)));
    const [, subscribers] = (await h.redis.pubsub('NUMSUB', h.keys.updates(8453))) as [string, number];
    expect(Number(subscribers)).toBe(1);
    expect(await metric('gateway_streams_open', 'chain="8453"')).toBe(8);
    expect(await metric('gateway_stream_events_total', 'event="book"')).toBeGreaterThanOrEqual(8);
    for (const s of streams) s.close();
    await until(async () => (await metric('gateway_streams_open', 'chain="8453"')) === 0);
  });
});

describe('GET /v2/price/stream: open streams per API key', () => {
  it('behavior: the limit holds across two replicas; a closed stream frees its slot; each key has its own', async () => {
    const a = await h.gateway({ streamsPerKey: 2 });
    const b = await h.gateway({ streamsPerKey: 2 });
    const [baseA, baseB] = [await h.listen(a.app), await h.listen(b.app)];
    const k = await h.apiKey({ id: 'limited' });
    const s1 = await stream('', { 'X-API-KEY': k }, baseA);
    const s2 = await stream('', { 'X-API-KEY': k }, baseB);
    expect([s1.status, s2.status]).toEqual([200, 200]);
    const refused = await call(request(a.app).get('/v2/price/stream').set('X-API-KEY', k));
    expect(refused.status).toBe(429);
    expect(refused.body).toEqual(
      envelope('RATE_LIMITED', 'open streams limit of 2 per API key reached', refused.headers['x-request-id']),
    );
    expect(refused.headers['retry-after']).toBe('15');
    // Another key of the same integrator counts on its own.
    const { apiKey: other } = await h.store.issueKey('limited');
    expect((await stream('', { 'X-API-KEY': other }, baseA)).status).toBe(200);

    s2.close();
    await until(async () => (await stream('', { 'X-API-KEY': k }, baseB)).status === 200);
  });

  it('behavior: revoking the key ends its open stream; the reconnect is 401', async () => {
    const k = await h.apiKey();
    const s = await stream('', { 'X-API-KEY': k });
    expect(s.status).toBe(200);
    const found = await h.store.lookupHash(hashApiKey(k));
    await h.store.revokeKey(found!.key.keyId);
    const ended = await settlesWithin(s.ended, 3 * KEY_RECHECK_MS);
    expect(ended).toBe(true);
    expect((await stream('', { 'X-API-KEY': k })).status).toBe(401);
  });

  it('behavior: closing the gateway ends its streams and releases their slots', async () => {
    const c = await h.gateway({ streamsPerKey: 1 });
    const d = await h.gateway({ streamsPerKey: 1 });
    const k = await h.apiKey();
    const s = await stream('', { 'X-API-KEY': k }, await h.listen(c.app));
    expect(s.status).toBe(200);
    const baseD = await h.listen(d.app);
    expect((await stream('', { 'X-API-KEY': k }, baseD)).status).toBe(429);
    await c.close();
    await s.ended;
    // Released at once (not after the 15 s lease).
    await until(async () => (await stream('', { 'X-API-KEY': k }, baseD)).status === 200, 2_000);
  });
});

async function metric(name: string, labels?: string): Promise<number> {
  const text = (await request(gw.opsApp).get('/metrics')).text;
  const line = text
    .split('\n')
    .find((l) => l.startsWith(name) && (labels === undefined || l.includes(labels)) && !l.startsWith('#'));
  return line ? Number(line.split(' ').at(-1)) : 0;
}
