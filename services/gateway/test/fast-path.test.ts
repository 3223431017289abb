import request from 'supertest';
import type { Gateway } from '@pmm/gateway';
import { call, harness, type Harness } from './support/harness';

let h: Harness;
let gw: Gateway;
let key: string;
let only56: string;

beforeAll(async () => {
  h = await harness();
  gw = await h.gateway();
  key = await h.apiKey();
  only56 = await h.apiKey({ chains: [56] });
  await h.putBook(8453);
  await h.dropBook(4663);
});
afterAll(() => h.cleanup());

/** Status, body with the request id blanked, and every header but Date and the request id. */
function shape(res: request.Response) {
  const headers = { ...res.headers } as Record<string, unknown>;
  delete headers.date;
  delete headers['x-request-id'];
  delete headers.connection;
  delete headers['keep-alive'];
  return { status: res.status, text: res.text.replace(/"requestId":"[^"]+"/, '"requestId":"-"'), headers };
}

describe('fast path and Express routes', () => {
  it.each([
    ['/v2/price', 'key'],
    ['/v2/price?chainId=8453&x=1', 'key'],
    ['/v2/price?chainid=56', 'key'],
    ['/v1/price?chainid=56&x=1', 'key'],
    ['/v2/price?chainId=abc', 'key'],
    ['/v2/price?chainId=56&chainId=56', 'key'],
    ['/v2/price?chainId=1', 'key'],
    ['/v2/price?chainId=4663', 'key'],
    ['/v2/price?chainId=8453', 'only56'],
    ['/v2/price', 'none'],
    ['/v2/price', 'bad'],
    ['/v1/price?chainId=56', 'key'],
    ['/v1/price', 'only56'],
    ['/v1/price', 'none'],
  ])('behavior: GET %s with %s key answers the same through both', async (path, which) => {
    const k = { key, only56, none: undefined, bad: 'pmm_bad' }[which];
    const send = (app: Gateway['app'] | Gateway['expressApp']) => {
      const r = request(app).get(path);
      return call(k ? r.set('X-API-KEY', k) : r);
    };
    const fast = shape(await send(gw.app));
    const slow = shape(await send(gw.expressApp));
    // The two requests consume the budget one after the other, and may straddle a second
    // boundary: remaining differs by construction, reset by at most one second.
    const reset = (h: Record<string, unknown>) => Number(h['ratelimit-reset'] ?? 0);
    expect(Math.abs(reset(fast.headers) - reset(slow.headers))).toBeLessThanOrEqual(1);
    expect(fast).toEqual({
      ...slow,
      headers: {
        ...slow.headers,
        'ratelimit-remaining': fast.headers['ratelimit-remaining'],
        'ratelimit-reset': fast.headers['ratelimit-reset'],
      },
    });
  });
});
