/**
 * What /v2/price, /v1/price and /v2/price/stream offer under the operator's halts (a real
 * HaltStore on the harness's Redis; the gateway reads them through its HaltView): a halted
 * chain's book, or every book under a halt of everything or of the asking integrator, is 503
 * HALTED in the envelope (never the reason); a halted pair's levels are left out and every other
 * pair served as stored; a user's halt leaves books alone; a resume restores the stored bytes.
 */
import request from 'supertest';
import { DurableWrites, HaltStore, haltScopeKind, type HaltScope } from '@pmm/core';
import type { Gateway } from '@pmm/gateway';
import { until } from '@pmm/testkit';
import { bookBody, call, harness, type Harness } from '../support/harness';

let h: Harness;
let gw: Gateway;
let key: string;
let otherKey: string;
let store: HaltStore;

const WETH = '0x4200000000000000000000000000000000000006';
const WBTC = '0x0555e30da8f98308edb960aa94c0db47230d2b9c';
const pairOf = (baseToken: string) => ({
  baseToken,
  quoteToken: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913',
  bids: [{ price: '3012.45', amount: '1.5' }],
  asks: [{ price: '3013.1', amount: '1.5' }],
});
const BOOK = bookBody(8453, 100, [pairOf(WETH), pairOf(WBTC)]);

beforeAll(async () => {
  h = await harness();
  gw = await h.gateway();
  key = await h.apiKey({ id: 'acme' });
  otherKey = await h.apiKey({ id: 'other' });
  store = new HaltStore(h.redis, h.keys);
  await h.putBook(8453, BOOK);
  await h.putBook(56, bookBody(56, 7));
});
afterAll(() => h.cleanup());

const get = (query: string, k = key) => call(request(gw.app).get(`/v2/price${query}`).set('X-API-KEY', k));

/** Halts `scope`, waits until the gateway's view has it, runs `check`, resumes. */
async function halted(scope: HaltScope, check: () => Promise<void>): Promise<void> {
  const durable = DurableWrites.unconfirmed(h.redis);
  await durable.run(() => store.halt({ scope, reason: 'secret reason 42', by: 'alice', at: Date.now() }));
  // The gateway's own view holds the halt (its gauge is set from that view at each scrape): a
  // user's halt changes no book, so the answers alone could not show it was read.
  const kind = haltScopeKind(scope);
  await until(
    async () =>
      new RegExp(`gateway_halts_active\\{[^}]*scope="${kind}"[^}]*\\} 1\\b`).test(
        (await request(gw.opsApp).get('/metrics')).text,
      ),
    3_000,
    'the gateway sees the halt',
  );
  try {
    await check();
  } finally {
    await durable.run(() => store.resume(scope, { reason: 'ok', by: 'alice', at: Date.now() }));
    await until(async () => (await get('?chainId=8453')).text === BOOK, 3_000, 'the gateway sees the resume');
  }
}

function expectHalted(res: request.Response, what: string): void {
  expect({ status: res.status, body: res.body, retryAfter: res.headers['retry-after'] }).toEqual({
    status: 503,
    body: {
      error: {
        code: 'HALTED',
        message: `${what} by the operator; retry later`,
        requestId: res.headers['x-request-id'],
      },
    },
    retryAfter: '60',
  });
  expect(res.text).not.toContain('secret');
}

describe('/v2/price under halts', () => {
  it("behavior: a halted chain's book is 503 HALTED; another chain's is served", async () => {
    await halted({ chainId: 8453 }, async () => {
      expectHalted(await get('?chainId=8453'), 'signing is halted on this chain');
      expectHalted(
        await call(request(gw.app).get('/v1/price').set('X-API-KEY', key)),
        'signing is halted on this chain',
      );
      expect((await get('?chainId=56')).text).toBe(bookBody(56, 7));
    });
  });

  it("behavior: a halted pair's levels are left out, the other pairs served as stored", async () => {
    await halted({ chainId: 8453, pair: WETH }, async () => {
      const res = await get('?chainId=8453');
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ ...JSON.parse(BOOK), pairs: [pairOf(WBTC)] });
      const v1 = await call(request(gw.app).get('/v1/price').set('X-API-KEY', key));
      expect(v1.body.pairs.map((p: { baseToken: string }) => p.baseToken)).toEqual([WBTC]);
    });
  });

  it("behavior: an integrator's halt refuses its books only; a user's halt leaves books alone", async () => {
    await halted({ integratorId: 'acme' }, async () => {
      expectHalted(await get('?chainId=56'), "signing is halted for this API key's integrator");
      expect((await get('?chainId=8453', otherKey)).text).toBe(BOOK);
    });
    await halted({ userAddress: `0x${'cc'.repeat(20)}` }, async () => {
      expect((await get('?chainId=8453')).text).toBe(BOOK);
    });
  });

  it('behavior: a halt of everything refuses every book, and opening a price stream', async () => {
    await halted({}, async () => {
      expectHalted(await get('?chainId=56', otherKey), 'signing is halted');
      expectHalted(
        await call(request(gw.app).get('/v2/price/stream?chainId=56').set('X-API-KEY', key)),
        'signing is halted',
      );
    });
  });
});
