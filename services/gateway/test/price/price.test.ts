import request from 'supertest';
import type { Gateway } from '@pmm/gateway';
import { bookBody, call, harness, type Harness } from '../support/harness';

let h: Harness;
let gw: Gateway;
let key: string;

beforeAll(async () => {
  h = await harness();
  gw = await h.gateway();
  key = await h.apiKey();
});
afterAll(() => h.cleanup());

const get = (query: string, k = key) => call(request(gw.app).get(`/v2/price${query}`).set('X-API-KEY', k));

describe('GET /v2/price', () => {
  it('behavior: serves the stored book byte for byte with JSON content type', async () => {
    // Deliberately unusual formatting: the gateway must not re-serialise.
    const stored = `{"chainId":56,"blockNumber":7,"blockTime":1767225607,"pairs":[] }`;
    await h.putBook(56, stored);
    const res = await get('?chainId=56');
    expect(res.status).toBe(200);
    expect(res.text).toBe(stored);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(res.headers['content-length']).toBe(String(Buffer.byteLength(stored)));
    expect(res.headers['cache-control']).toBe('no-store');
  });

  it('default: chainId omitted or 0 (also 000) serves chain 8453', async () => {
    const stored = await h.putBook(8453, bookBody(8453, 11));
    for (const q of ['', '?chainId=0', '?chainId=000', '?chainId=8453', '?chainId=08453']) {
      const res = await get(q);
      expect({ q, status: res.status, text: res.text }).toEqual({ q, status: 200, text: stored });
    }
  });

  it.each([
    ['?chainid=56', 'chainid'],
    ['?foo=bar&chainId=8453', 'foo'],
    ['?chainId=56&x', 'x'],
    ['?=1', ''],
  ])(
    'error: an unknown query parameter (%s) is 400 UNSUPPORTED_FIELD naming it, never chain 8453 by default',
    async (q, name) => {
      await h.putBook(8453, bookBody(8453, 11));
      const res = await get(q);
      expect({ status: res.status, body: res.body }).toEqual({
        status: 400,
        body: {
          error: {
            code: 'UNSUPPORTED_FIELD',
            message: `${name}: unsupported query parameter (only chainId is defined)`,
            requestId: res.headers['x-request-id'],
          },
        },
      });
    },
  );

  it('precedence: an unknown query parameter is UNSUPPORTED_FIELD before a malformed chainId (422)', async () => {
    const res = await get('?chainId=abc&chainid=56');
    expect({ status: res.status, code: res.body.error.code }).toEqual({ status: 400, code: 'UNSUPPORTED_FIELD' });
  });

  it.each([
    ['abc', 'chainId: must be a base-10 unsigned integer (ASCII digits only)'],
    ['-1', 'chainId: must be a base-10 unsigned integer (ASCII digits only)'],
    ['%2056', 'chainId: must be a base-10 unsigned integer (ASCII digits only)'],
    ['56%20', 'chainId: must be a base-10 unsigned integer (ASCII digits only)'],
    ['%2B56', 'chainId: must be a base-10 unsigned integer (ASCII digits only)'],
    ['1.5', 'chainId: must be a base-10 unsigned integer (ASCII digits only)'],
    ['0x38', 'chainId: must be a base-10 unsigned integer (ASCII digits only)'],
    ['', 'chainId: must not be empty'],
  ])('error: chainId=%s is 422 VALIDATION_ERROR', async (raw, message) => {
    const res = await get(`?chainId=${raw}`);
    expect(res.status).toBe(422);
    expect(res.body).toEqual({ error: { code: 'VALIDATION_ERROR', message, requestId: res.headers['x-request-id'] } });
  });

  it('error: a repeated chainId (56&chainId=56) is 422', async () => {
    const res = await get('?chainId=56&chainId=56');
    expect(res.status).toBe(422);
    expect(res.body.error).toMatchObject({ code: 'VALIDATION_ERROR', message: 'chainId: must be given at most once' });
  });

  it('error: a bare chainId without "=" is 422 (empty value)', async () => {
    const res = await get('?chainId');
    expect(res.status).toBe(422);
  });

  it.each([
    ['1', 'chainId: 1 is not served (served: 8453, 56, 4663)'],
    ['137', 'chainId: 137 is not served (served: 8453, 56, 4663)'],
    ['9007199254740993', 'chainId: too large, not served (served: 8453, 56, 4663)'],
    ['9'.repeat(5000), 'chainId: too large, not served (served: 8453, 56, 4663)'],
  ])(
    'error: well-formed unserved chainId %# (1, 137, 2^53+1, 5000 digits) is 400 UNSUPPORTED_CHAIN',
    async (raw, message) => {
      const res = await get(`?chainId=${raw}`);
      expect(res.status).toBe(400);
      expect(res.body).toEqual({
        error: { code: 'UNSUPPORTED_CHAIN', message, requestId: res.headers['x-request-id'] },
      });
    },
  );

  it('error: a known chain this deployment does not serve is 400 UNSUPPORTED_CHAIN', async () => {
    const only = await h.gateway({ servedChains: [8453] });
    const res = await call(request(only.app).get('/v2/price?chainId=56').set('X-API-KEY', key));
    expect(res.status).toBe(400);
    expect(res.body.error.message).toBe('chainId: 56 is not served (served: 8453)');
  });

  it('error: a served chain not enabled for the key is 400 UNSUPPORTED_CHAIN', async () => {
    await h.putBook(56);
    const limited = await h.apiKey({ chains: [8453] });
    const res = await get('?chainId=56', limited);
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({
      code: 'UNSUPPORTED_CHAIN',
      message: 'chainId: 56 is not enabled for this API key',
    });
    expect((await get('?chainId=8453', limited)).status).toBe(200);
  });

  it('error: no book for the chain is 503 SERVICE_UNAVAILABLE, never an empty book', async () => {
    await h.dropBook(4663);
    const res = await get('?chainId=4663');
    expect(res.status).toBe(503);
    expect(res.headers['retry-after']).toBe('1');
    expect(res.body).toEqual({
      error: {
        code: 'SERVICE_UNAVAILABLE',
        message: 'chainId: 4663 has no live orderbook yet, retry shortly',
        requestId: res.headers['x-request-id'],
      },
    });
  });

  it('behavior: a deleted book stops being served within one second', async () => {
    await h.putBook(4663);
    expect((await get('?chainId=4663')).status).toBe(200); // now cached
    // Delete without a notice (as a TTL expiry would): only the cache bound applies.
    await h.redis.del(h.keys.book(4663));
    const deletedAt = Date.now();
    let status = 200;
    while (status === 200) {
      status = (await get('?chainId=4663')).status;
      if (Date.now() - deletedAt > 1_500) break;
    }
    expect(status).toBe(503);
    expect(Date.now() - deletedAt).toBeLessThan(1_000 + 100);
  });

  it('behavior: a new book announced on book-updated is served at once, not at cache expiry', async () => {
    const slow = await h.gateway({ bookCacheMs: 1_000 });
    const getSlow = () => call(request(slow.app).get('/v2/price?chainId=56').set('X-API-KEY', key));
    await h.putBook(56, bookBody(56, 1));
    expect((await getSlow()).text).toBe(bookBody(56, 1));
    const next = bookBody(56, 2);
    await h.redis.set(h.keys.book(56), next);
    const started = Date.now();
    await h.redis.publish(h.keys.updates(56), JSON.stringify({ type: 'book', chainId: 56, blockNumber: 2 }));
    let text = '';
    while (text !== next && Date.now() - started < 2_000) {
      text = (await getSlow()).text;
      if (text !== next) await new Promise((r) => setTimeout(r, 10));
    }
    expect(text).toBe(next);
    // Well under the 1000 ms cache life: the notice, not the expiry, refreshed it.
    expect(Date.now() - started).toBeLessThan(700);
  });

  it('behavior: HEAD answers the headers of GET without a body', async () => {
    const stored = await h.putBook(8453);
    const res = await call(request(gw.app).head('/v2/price').set('X-API-KEY', key));
    expect(res.status).toBe(200);
    expect(res.headers['content-length']).toBe(String(Buffer.byteLength(stored)));
    expect(res.text).toBeUndefined();
  });

  it('behavior: without the cache (BOOK_CACHE_MS=0) every request reads Redis', async () => {
    const nocache = await h.gateway({ bookCacheMs: 0 });
    await h.putBook(4663);
    expect((await call(request(nocache.app).get('/v2/price?chainId=4663').set('X-API-KEY', key))).status).toBe(200);
    await h.redis.del(h.keys.book(4663)); // no notice: nothing cached to invalidate
    expect((await call(request(nocache.app).get('/v2/price?chainId=4663').set('X-API-KEY', key))).status).toBe(503);
  });
});
