/**
 * The signer, the last gate, against the halts in a real Redis (its app with a real HaltView, as
 * start-signer.ts wires it): a sign a halt covers is refused with 503 HALTED in the envelope,
 * naming the kind of scope and never the reason; a sign outside every halt is signed; after the
 * resume it is signed again; while the halts cannot be read, nothing is signed (503
 * SERVICE_UNAVAILABLE), whatever the request.
 */
import request from 'supertest';
import { DurableWrites, HaltStore, HaltView, createMetrics, type HaltScope } from '@pmm/core';
import { createApp } from '../../src';
import {
  INTERNAL_TOKEN,
  OTHER_USER,
  USER,
  integrator,
  startFixture,
  testRegistry,
  type Fixture,
} from '../support/fixture';

let f: Fixture;
let view: HaltView;
let store: HaltStore;
let app: ReturnType<typeof createApp>;
let now = Date.now();
/** The app's own registry (the fixture's app declared its metrics on the fixture's). */
const metrics = createMetrics('signer-halts-test', { defaultMetrics: false });

const WETH = (c: number) => testRegistry(c).baseTokens[0]!.address;
const WBTC = (c: number) => testRegistry(c).baseTokens[1]!.address;
const QUOTE = (c: number) => testRegistry(c).quoteToken.address;

beforeAll(async () => {
  f = await startFixture({ whitelist: [USER, OTHER_USER] });
  await f.putIntegrator(integrator('other', { whitelist: [USER.toLowerCase(), OTHER_USER.toLowerCase()] }));
  // No periodic re-read, no notices and the test's clock: each halt is read by refresh(), so the
  // test waits for nothing (a notice of one case's resume, delivered late, re-read the halts in
  // the next case and made them fresh where that case needs them stale).
  view = new HaltView({ redis: f.redis, keys: f.keys, refreshMs: 3_600_000, now: () => now });
  await view.start();
  store = new HaltStore(f.redis, f.keys);
  app = createApp({ ...f.deps, halts: view, metrics });
});

afterAll(async () => {
  await view.stop();
  await f.close();
});

function sign(o: { chainId?: number; tokenIn?: string; tokenOut?: string; user?: string; integratorId?: string } = {}) {
  const chainId = o.chainId ?? 8453;
  return request(app)
    .post('/v2/swap/sign')
    .set('X-Internal-Token', INTERNAL_TOKEN)
    .set('X-Integrator-Id', o.integratorId ?? 'acme')
    .set('X-Request-Id', 'rid-halts')
    .set('Content-Type', 'application/json')
    .send(
      JSON.stringify({
        chainId,
        tokenIn: o.tokenIn ?? QUOTE(chainId),
        tokenOut: o.tokenOut ?? WETH(chainId),
        fee: '30',
        userAddress: o.user ?? USER,
      }),
    );
}

async function halted(scope: HaltScope, run: () => Promise<void>): Promise<void> {
  const durable = DurableWrites.unconfirmed(f.redis);
  await durable.run(() => store.halt({ scope, reason: 'secret reason 1234', by: 'alice', at: now }));
  await view.refresh();
  try {
    await run();
  } finally {
    await durable.run(() => store.resume(scope, { reason: 'done', by: 'alice', at: now }));
    await view.refresh();
  }
}

function expectHalted(res: request.Response, what: string): void {
  expect(res.status).toBe(503);
  expect(res.headers['retry-after']).toBe('60');
  expect(res.body).toEqual({
    error: { code: 'HALTED', message: `${what} by the operator; retry later`, requestId: 'rid-halts' },
  });
  expect(res.text).not.toContain('secret reason');
}

describe('the signer and the halts', () => {
  it('behavior: a halt of everything refuses every sign', async () => {
    await halted({}, async () => {
      expectHalted(await sign(), 'signing is halted');
      expectHalted(await sign({ chainId: 56, integratorId: 'other' }), 'signing is halted');
    });
    expect((await sign()).status).toBe(200);
  });

  it('behavior: a chain halt refuses that chain only', async () => {
    await halted({ chainId: 8453 }, async () => {
      expectHalted(await sign(), 'signing is halted on this chain');
      expect((await sign({ chainId: 56 })).status).toBe(200);
    });
  });

  it('behavior: a pair halt refuses that base token on that chain, either way round, and no other pair', async () => {
    await halted({ chainId: 8453, pair: WETH(8453).toLowerCase() }, async () => {
      expectHalted(await sign(), 'signing is halted for this pair');
      expectHalted(await sign({ tokenIn: WETH(8453), tokenOut: QUOTE(8453) }), 'signing is halted for this pair');
      expect((await sign({ tokenOut: WBTC(8453) })).status).toBe(200);
      expect((await sign({ chainId: 56 })).status).toBe(200);
    });
  });

  it('behavior: an integrator halt refuses that integrator only', async () => {
    await halted({ integratorId: 'acme' }, async () => {
      expectHalted(await sign(), "signing is halted for this API key's integrator");
      expect((await sign({ integratorId: 'other' })).status).toBe(200);
    });
  });

  it('behavior: a user halt refuses that user address only, for every integrator', async () => {
    await halted({ userAddress: USER.toLowerCase() }, async () => {
      expectHalted(await sign(), 'signing is halted for this user address');
      expectHalted(await sign({ integratorId: 'other' }), 'signing is halted for this user address');
      expect((await sign({ user: OTHER_USER })).status).toBe(200);
    });
  });

  it('error: while the halts cannot be read, nothing is signed (503 SERVICE_UNAVAILABLE), and signing resumes once they are', async () => {
    now += 800;
    const res = await sign();
    expect(res.status).toBe(503);
    expect(res.body.error.code).toBe('SERVICE_UNAVAILABLE');
    await view.refresh();
    expect((await sign()).status).toBe(200);
  });

  it('behavior: refusals are counted by the kind of scope', async () => {
    await halted({ chainId: 56 }, async () => {
      await sign({ chainId: 56 });
    });
    const text = await metrics.registry.metrics();
    expect(text).toMatch(/signer_halt_refusals_total\{chain="56",scope="chain",[^}]*\} 1/);
    expect(text).toMatch(/signer_halt_refusals_total\{chain="8453",scope="unreadable",[^}]*\} 1/);
  });
});
