/**
 * The operator console's server side on a real Redis: the page and its assets with their own
 * Content-Security-Policy, the error envelope on its paths, and the event stream (books and
 * `unavailable` from the price stream's hub, the status with indexer presence, the sign rate
 * read from the audit streams and the maker's ledger of the day), shared by every viewer.
 */
import request from 'supertest';
import { announcePresence } from '@pmm/core';
import { sampleLedgerRevert } from '@pmm/testkit';
import type { Gateway } from '@pmm/gateway';
import { bookBody, harness, type Harness } from '../support/harness';
import { awayFromMidnight, ledgerWriter, USDC } from '../support/ledger-writer';
import { openStream, type SseStream } from '../support/sse-client';
import type { ConsoleStatus } from '../../src/console/console-status';

let h: Harness;
let gw: Gateway;
let ops: string;
const streams: SseStream[] = [];

beforeAll(async () => {
  h = await harness();
  gw = await h.gateway({ servedChains: [8453, 56] });
  ops = await h.listen(gw.opsApp);
});

afterAll(async () => {
  for (const s of streams) s.close();
  await h.cleanup();
});

async function viewer(): Promise<SseStream> {
  const s = await openStream(ops, '/console/events');
  streams.push(s);
  return s;
}

const statuses = (s: SseStream) =>
  s.events.filter((e) => e.event === 'status').map((e) => JSON.parse(e.data) as ConsoleStatus);

describe('the console page', () => {
  it('behavior: serves the page, its script and style with a CSP that allows only them', async () => {
    const page = await request(gw.opsApp).get('/console');
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
    const csp = page.headers['content-security-policy'] as string;
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("connect-src 'self'");
    expect(csp).not.toContain('unsafe-inline');
    expect(page.headers['x-content-type-options']).toBe('nosniff');
    // No inline script: every <script> names its source.
    const scripts = page.text.match(/<script[^>]*>/g) ?? [];
    expect(scripts.length).toBeGreaterThan(0);
    for (const tag of scripts) expect(tag).toMatch(/src="console\/console\.js"/);

    const js = await request(gw.opsApp).get('/console/console.js');
    expect(js.status).toBe(200);
    expect(js.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(js.text).toContain("new EventSource('console/events')");
    const css = await request(gw.opsApp).get('/console/console.css');
    expect(css.status).toBe(200);
    expect(css.headers['content-type']).toBe('text/css; charset=utf-8');
  });

  it('behavior: unknown paths are 404 and other methods 405, in the envelope', async () => {
    const missing = await request(gw.opsApp).get('/console/other.js');
    expect(missing.status).toBe(404);
    expect(missing.body.error.code).toBe('NOT_FOUND');
    expect(typeof missing.body.error.requestId).toBe('string');
    const post = await request(gw.opsApp).post('/console');
    expect(post.status).toBe(405);
    expect(post.headers.allow).toBe('GET, HEAD');
    expect(post.body.error.code).toBe('METHOD_NOT_ALLOWED');
    const postEvents = await request(gw.opsApp).post('/console/events');
    expect(postEvents.status).toBe(405);
    // The public port has no console.
    expect((await request(gw.app).get('/console')).status).toBe(404);
  });
});

describe('the console event stream', () => {
  it('behavior: every viewer gets each book as stored, then `unavailable` when it goes', async () => {
    const body = await h.putBook(8453, bookBody(8453, 700));
    const a = await viewer();
    const b = await viewer();
    for (const s of [a, b]) {
      expect(s.status).toBe(200);
      expect(s.headers['content-type']).toBe('text/event-stream; charset=utf-8');
      await s.until((x) => x.events.some((e) => e.event === 'book' && e.data === body));
      // Chain 56 has no book: it is announced unavailable from the start.
      await s.until((x) => x.events.some((e) => e.event === 'unavailable' && e.data === '{"chainId":56}'));
    }
    const next = await h.putBook(8453, bookBody(8453, 701));
    for (const s of [a, b]) await s.until((x) => x.events.some((e) => e.data === next));
    await h.dropBook(8453);
    for (const s of [a, b]) await s.until((x) => x.events.some((e) => e.data === '{"chainId":8453}'));
    // A viewer that opens now starts with the chain unavailable, not with the old book.
    const c = await viewer();
    await c.until((x) => x.events.some((e) => e.event === 'unavailable' && e.data === '{"chainId":8453}'));
    expect(c.events.some((e) => e.event === 'book')).toBe(false);
  });

  it('behavior: the status names the parts, the announced indexer replicas and the sign rate of every signer', async () => {
    const at = Date.now();
    for (const replica of ['host-a:1', 'host-b:2']) {
      await announcePresence(h.redis, h.keys, {
        chainId: 8453,
        replica,
        nodeUp: replica === 'host-a:1',
        headBlock: 1234,
        transport: 'websocket',
        at,
      });
    }
    const s = await viewer();
    // A status taken after the announcements (a viewer first gets the latest one taken).
    const announced = (st: ConsoleStatus) => st.chains.find((c) => c.chainId === 8453)?.indexers?.length === 2;
    await s.until((x) => statuses(x).some(announced));
    const first = statuses(s).find(announced)!;
    expect(first.parts.redis).toBe('ok');
    expect(first.parts.signer).toMatch(/^fail: /); // no signer in this test
    const chain = first.chains.find((c) => c.chainId === 8453)!;
    expect(chain.indexers!.map((i) => [i.replica, i.nodeUp, i.headBlock])).toEqual([
      ['host-a:1', true, 1234],
      ['host-b:2', false, 1234],
    ]);
    expect(first.chains.find((c) => c.chainId === 56)!.indexers).toEqual([]);

    // Signatures as the signer records them (one audit entry each), from any replica.
    for (let i = 0; i < 30; i++) await h.redis.xadd(h.keys.audit(8453), '*', 'r', '{}');
    const writer = setInterval(() => void h.redis.xadd(h.keys.audit(8453), '*', 'r', '{}'), 100);
    try {
      await s.until(
        (x) =>
          (statuses(x)
            .at(-1)
            ?.chains.find((c) => c.chainId === 8453)?.signRate ?? 0) > 2,
        15_000,
      );
    } finally {
      clearInterval(writer);
    }
    const last = statuses(s).at(-1)!;
    expect(last.chains.find((c) => c.chainId === 56)!.signRate).toBe(0);
    expect(last.time).toBeGreaterThanOrEqual(at);
  }, 30_000);

  it("behavior: the status carries each chain's ledger of the UTC day: per integrator swaps, notional, reverted calls and rolling 60 s markout, largest notional first, and the ledger's block", async () => {
    const ledger = ledgerWriter(h.redis, h.keys, 8453);
    await ledger.registry();
    await awayFromMidnight();
    const now = Math.floor(Date.now() / 1_000);
    const yesterday = now - 86_400;
    await ledger.commit(50, [ledger.entry(50, yesterday, 'acme', '1000000')]);
    await ledger.commit(900, [
      ledger.entry(900, now, 'acme', '3000.25'),
      ledger.entry(900, now, 'beta', '5000'),
      ledger.entry(900, now, '', '12'),
    ]);
    // Reverted calls: beta's beside its swap, and gamma's, an integrator with no swap at all; firm
    // signatures judged: acme's three (one unused), and delta's, an integrator with nothing else.
    await ledger.commit(
      901,
      [ledger.entry(901, now, 'acme', '2999.75')],
      [
        sampleLedgerRevert(901, now, { integratorId: 'beta' }),
        sampleLedgerRevert(901, now, { integratorId: 'gamma', txHash: `0x${'cd'.repeat(32)}` }),
      ],
      [
        ledger.fate('acme', 'executed', now),
        ledger.fate('acme', 'executed', now),
        ledger.fate('acme', 'unused', now),
        ledger.fate('delta', 'reverted', now),
      ],
    );
    await ledger.markouts([
      { integratorId: 'acme', bps: -12, referenceBps: -40 },
      { integratorId: 'acme', bps: -8 },
      { integratorId: 'zeta', bps: 3 },
    ]);
    const s = await viewer();
    const ledgerOf = (st: ConsoleStatus) => st.chains.find((c) => c.chainId === 8453)?.ledger;
    /** A row without markouts yet, nor firm signatures judged. */
    const row = (integratorId: string, swaps: number, notional: number, reverts: number) => ({
      integratorId,
      swaps,
      notional,
      reverts,
      firm: 0,
      firmExecuted: 0,
      firmUnused: 0,
      fillRate: null,
      unusedShare: null,
      markout60sBps: null,
      markoutSwaps: 0,
      referenceMarkout60sBps: null,
      referenceMarkoutSwaps: 0,
    });
    await s.until((x) => statuses(x).some((st) => ledgerOf(st)?.block === 901));
    const last = statuses(s).find((st) => ledgerOf(st)?.block === 901)!;
    expect(ledgerOf(last)).toEqual({
      day: new Date(now * 1_000).toISOString().slice(0, 10),
      block: 901,
      integrators: [
        {
          ...row('acme', 2, 6000, 0),
          firm: 3,
          firmExecuted: 2,
          firmUnused: 1,
          fillRate: 2 / 3,
          unusedShare: 1 / 3,
          markout60sBps: -10,
          markoutSwaps: 2,
          referenceMarkout60sBps: -40,
          referenceMarkoutSwaps: 1,
        },
        row('beta', 1, 5000, 1),
        row('', 1, 12, 0),
        { ...row('delta', 0, 0, 0), firm: 1, fillRate: 0, unusedShare: 0 },
        row('gamma', 0, 0, 1),
      ],
    });
    expect(last.chains.find((c) => c.chainId === 8453)!.quoteToken).toBe(USDC.toLowerCase());
    // A chain no ledger has written on.
    expect(last.chains.find((c) => c.chainId === 56)!.ledger).toEqual({
      day: expect.any(String),
      block: null,
      integrators: [],
    });
  }, 90_000);

  it('behavior: closing the gateway ends the console streams', async () => {
    const other = await h.gateway({ servedChains: [8453] });
    const base = await h.listen(other.opsApp);
    const s = await openStream(base, '/console/events');
    await s.until((x) => x.events.length > 0);
    other.closeStreams();
    await s.ended;
  });
});
