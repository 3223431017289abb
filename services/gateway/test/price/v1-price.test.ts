import request from 'supertest';
import { v1BodyFromV2, type Gateway } from '@pmm/gateway';
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

const get = (query = '', k = key) => call(request(gw.app).get(`/v1/price${query}`).set('X-API-KEY', k));

function expectDeprecated(res: request.Response): void {
  expect(res.headers.deprecation).toBe('true');
  expect(res.headers.link).toBe('</v2/price>; rel="successor-version"');
}

describe('GET /v1/price (legacy)', () => {
  it('behavior: before the first book, 200 with an empty book (no chainId)', async () => {
    await h.dropBook(8453);
    const res = await get();
    expect(res.status).toBe(200);
    expect(res.text).toBe('{"blockNumber":0,"blockTime":0,"pairs":[]}');
    expectDeprecated(res);
  });

  it('behavior: the chain-8453 book without chainId, every other byte as stored', async () => {
    const stored = await h.putBook(8453, bookBody(8453, 42));
    const res = await get();
    expect(res.status).toBe(200);
    expect(res.text).toBe(`{${stored.slice('{"chainId":8453,'.length)}`);
    expect(res.body).toEqual((({ chainId: _c, ...rest }) => rest)(JSON.parse(stored)));
    expect(res.body.chainId).toBeUndefined();
    expectDeprecated(res);
  });

  it.each(['?chainId=56', '?chainId=abc', '?chainId=1&chainId=2', '?chainId=', '?chainId=99999999999999999999'])(
    'behavior: the chainId query parameter is ignored (%s)',
    async (q) => {
      const stored = await h.putBook(8453, bookBody(8453, 43));
      await h.putBook(56, bookBody(56, 43));
      const res = await get(q);
      expect(res.status).toBe(200);
      expect(res.text).toBe(v1BodyFromV2(stored));
    },
  );

  it('error: a key not enabled for chain 8453 is 401 (v1 has no UNSUPPORTED_CHAIN)', async () => {
    const only56 = await h.apiKey({ chains: [56] });
    const res = await get('', only56);
    expect(res.status).toBe(401);
    expect(res.body.error).toMatchObject({
      code: 'UNAUTHORIZED',
      message: 'X-API-KEY: this API key is not enabled for chain 8453, the only chain of /v1',
    });
    expectDeprecated(res);
  });

  it('behavior: every /v1 response carries Deprecation and Link, errors included', async () => {
    for (const res of [await call(request(gw.app).get('/v1/price')), await call(request(gw.app).delete('/v1/price'))]) {
      expect(res.headers.deprecation).toBe('true');
      expect(res.headers.link).toBe('</v2/price>; rel="successor-version"');
    }
    const sign = await call(request(gw.app).get('/v1/swap/sign'));
    expect(sign.headers.deprecation).toBe('true');
    expect(sign.headers.link).toBe('</v2/swap/sign>; rel="successor-version"');
    const v2 = await call(request(gw.app).get('/v2/price').set('X-API-KEY', key));
    expect(v2.headers.deprecation).toBeUndefined();
  });

  it('behavior: without chain 8453 served, /v1 does not exist (404)', async () => {
    const no8453 = await h.gateway({ servedChains: [56, 4663] });
    const res = await call(request(no8453.app).get('/v1/price').set('X-API-KEY', key));
    expect(res.status).toBe(404);
  });
});

describe('v1BodyFromV2', () => {
  it('behavior: cuts chainId when it leads; otherwise removes it through JSON', () => {
    expect(v1BodyFromV2('{"chainId":8453,"blockNumber":1,"blockTime":2,"pairs":[]}')).toBe(
      '{"blockNumber":1,"blockTime":2,"pairs":[]}',
    );
    expect(v1BodyFromV2('{"blockNumber":1,"chainId":8453,"blockTime":2,"pairs":[]}')).toBe(
      '{"blockNumber":1,"blockTime":2,"pairs":[]}',
    );
    expect(v1BodyFromV2('{ "chainId": 8453, "blockNumber": 1, "blockTime": 2, "pairs": [] }')).toBe(
      '{"blockNumber":1,"blockTime":2,"pairs":[]}',
    );
  });
});
