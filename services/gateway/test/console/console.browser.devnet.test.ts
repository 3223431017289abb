/**
 * The operator console in headless Chromium, against the system as `npm start` runs it
 * (testkit's startSystem): three devnet chains, an indexer process per chain (two replicas on
 * 8453), the signer and the gateway, each a process. Checks that every chain's depth chart shows exactly the levels that
 * `GET /v2/price` returns for the block it shows, that the chart moves with new blocks, and that
 * a chain whose node stops is shown unavailable, chart gone; and that each pair's standing against
 * its reference is shown live as the indexer wrote it (deviation, band, age), a curve moved past
 * its band showing the pair withheld (and out of the chart) until it is back. Also takes the screenshot of
 * docs/images/console.png: written there only with UPDATE_SCREENSHOTS=1 (else to a temp folder,
 * so that a test run leaves the tree clean).
 */
/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import request from 'supertest';
import { type OrderbookResponse } from '@pmm/protocol';
import { bookBandKey, createRedis, decodeBandRecord, redisKeys, redisReady, DEFAULT_KEY_PREFIX } from '@pmm/core';
import { curveOn, launchBrowser, setCurve, startSystem, swapChain, until, type System } from '@pmm/testkit';

jest.setTimeout(240_000);

type Browser = Awaited<ReturnType<typeof launchBrowser>>;
type Page = Awaited<ReturnType<Browser['newPage']>>;

const CHAINS = [8453, 56, 4663] as const;
const STOPPED = 4663;
const BOOK_TTL_MS = 4_000;
const SCREENSHOT = process.env.UPDATE_SCREENSHOTS
  ? path.resolve(__dirname, '..', '..', '..', '..', 'docs', 'images', 'console.png')
  : path.join(mkdtempSync(path.join(tmpdir(), 'pmm-console-')), 'console.png');

let sys: System;
/** The gateway's public URL, its operator URL. */
let gw: string;
let ops: string;
let key: string;
let browser: Browser;
let page: Page;
const pageErrors: string[] = [];
let signing: NodeJS.Timeout | undefined;

beforeAll(async () => {
  sys = await startSystem({
    chains: [...CHAINS],
    blockIntervalMs: 1_000,
    indexerReplicas: { 8453: 2 },
    env: {
      // Fast liveness (as the indexer's own tests): the stopped chain's book goes within seconds.
      indexer: {
        BOOK_TTL_MS: String(BOOK_TTL_MS),
        HEARTBEAT_MS: '500',
        RPC_TIMEOUT_MS: '1500',
        RECONNECT_MIN_MS: '100',
        RECONNECT_MAX_MS: '1000',
      },
    },
  });
  gw = sys.gateway.url;
  ops = sys.gateway.opsUrl;
  // The development key: whitelisted for every chain's test user.
  key = sys.gateway.apiKey;
  // A steady trickle of signatures on 8453, so that the console has a sign rate to show.
  const c = sys.chain(8453);
  const body = JSON.stringify({
    chainId: 8453,
    tokenIn: c.quoteToken.address,
    tokenOut: c.tokens.WETH!.address,
    fee: '30',
    userAddress: c.testUser.address,
  });
  signing = setInterval(() => {
    void request(gw)
      .post('/v2/swap/sign')
      .set('X-API-KEY', key)
      .set('Content-Type', 'application/json')
      .send(body)
      .catch(() => undefined);
  }, 200);
  browser = await launchBrowser();
  page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  page.on('pageerror', (err) => pageErrors.push(err.message));
  // A CSP violation is reported on the page's console.
  page.on('console', (msg) => {
    if (msg.type() === 'error') pageErrors.push(msg.text());
  });
});

afterAll(async () => {
  clearInterval(signing);
  await browser?.close();
  await sys?.stop();
});

interface ShownBook {
  block: number;
  pairs: { base: string; chartBlock: number; levels: string[][]; bids: string; asks: string; width: number }[];
}

/** What the page shows for a chain: its block, and per pair the table's levels and the chart's shape. */
function shown(chainId: number): Promise<ShownBook | null> {
  return page.evaluate((id) => {
    const card = document.querySelector<HTMLElement>(`.chain[data-chain="${id}"]`);
    if (!card || card.dataset.state !== 'live') return null;
    return {
      block: Number(card.dataset.block),
      pairs: [...card.querySelectorAll<HTMLElement>('figure.pair')].map((figure) => {
        const svg = figure.querySelector<SVGSVGElement>('svg.depth')!;
        return {
          base: figure.dataset.base!,
          chartBlock: Number(svg.dataset.block),
          levels: [...figure.querySelectorAll('tbody tr')].map((tr) =>
            [...tr.querySelectorAll('td')].map((td) => td.textContent ?? ''),
          ),
          bids: svg.querySelector('path.bids')?.getAttribute('d') ?? '',
          asks: svg.querySelector('path.asks')?.getAttribute('d') ?? '',
          width: svg.getBoundingClientRect().width,
        };
      }),
    };
  }, chainId);
}

/** The levels of `GET /v2/price` as the page's table lists them. */
function levelsOf(pair: OrderbookResponse['pairs'][number]): string[][] {
  return [...pair.bids.map((l) => ['bid', l.price, l.amount]), ...pair.asks.map((l) => ['ask', l.price, l.amount])];
}

describe('the operator console in a browser', () => {
  it('behavior: every chain shows a depth chart with the levels GET /v2/price returns for the block shown', async () => {
    await page.goto(`${ops}/console`);
    for (const chainId of CHAINS) {
      // The page and the API are compared at the same block (a new block may land in between: retry).
      const [book, api] = await until(
        async () => {
          const onPage = await shown(chainId);
          if (!onPage || onPage.pairs.length === 0) return null;
          const res = await request(gw).get(`/v2/price?chainId=${chainId}`).set('X-API-KEY', key);
          const body = res.body as OrderbookResponse;
          return res.status === 200 && body.blockNumber === onPage.block ? ([onPage, body] as const) : null;
        },
        60_000,
        `chain ${chainId} shown at the block of GET /v2/price`,
        200,
      );
      expect(book.pairs.map((p) => p.base)).toEqual(api.pairs.map((p) => p.baseToken.toLowerCase()));
      for (const [i, pair] of api.pairs.entries()) {
        const drawn = book.pairs[i]!;
        expect(drawn.levels).toEqual(levelsOf(pair));
        expect(drawn.levels.length).toBeGreaterThan(2);
        expect(drawn.chartBlock).toBe(api.blockNumber);
        // The chart itself: both areas drawn, one point per level and edge, on a visible SVG.
        expect(drawn.bids).toMatch(/^M[-0-9.]+,[-0-9.]+( L[-0-9.]+,[-0-9.]+)+ Z$/);
        expect(drawn.asks).toMatch(/^M[-0-9.]+,[-0-9.]+( L[-0-9.]+,[-0-9.]+)+ Z$/);
        expect(drawn.bids.split(' L')).toHaveLength(2 * pair.bids.length + 2);
        expect(drawn.width).toBeGreaterThan(200);
      }
    }
  });

  it('behavior: the chart moves when a new block arrives', async () => {
    const before = (await shown(8453))!;
    const after = await until(
      async () => {
        const now = await shown(8453);
        return now && now.block > before.block ? now : null;
      },
      10_000,
      'a newer block on the page',
    );
    expect(after.pairs[0]!.chartBlock).toBe(after.block);
    const age = await page.textContent('.chain[data-chain="8453"] [data-field="age"]');
    expect(age).toMatch(/^[0-9]+\.[0-9] s$/);
  });

  it('behavior: shows the parts, the indexer replicas and the sign rate; screenshot', async () => {
    await page.waitForSelector('#parts [data-part="redis"][data-state="ok"]');
    await page.waitForSelector('#parts [data-part="signer"][data-state="ok"]');
    await page.waitForSelector('.chain[data-chain="8453"] [data-field="indexers"][data-replicas="2"]');
    for (const chainId of [56, 4663])
      await page.waitForSelector(`.chain[data-chain="${chainId}"] [data-field="indexers"][data-replicas="1"]`);
    const rate = await until(
      async () => Number(await page.getAttribute('.chain[data-chain="8453"] [data-field="sign-rate"]', 'data-value')),
      20_000,
      'a sign rate on 8453',
      250,
    );
    expect(rate).toBeGreaterThan(1);
    expect(rate).toBeLessThan(20);
    await page.screenshot({ path: SCREENSHOT, fullPage: true });
  });

  it("behavior: each pair's standing against its reference, live: in band with the indexer's deviation and age; a curve moved past its band shows withheld until it is back", async () => {
    const redis = createRedis(sys.redisUrl, { name: 'console-references-test' });
    await redisReady(redis);
    const bandKey = (chainId: number) => bookBandKey(redisKeys(DEFAULT_KEY_PREFIX).book(chainId));
    /** The references table of a chain as the page shows it: its block, and per pair its cells. */
    const references = (chainId: number) =>
      page.evaluate((id) => {
        const table = document.querySelector(`.chain[data-chain="${id}"] table.references`);
        if (!table) return null;
        return {
          block: Number(/at block (\d+)/.exec(table.querySelector('caption')!.textContent ?? '')?.[1]),
          rows: [...table.querySelectorAll<HTMLElement>('tbody tr')].map((tr) => ({
            base: tr.dataset.base!,
            withheld: tr.dataset.withheld === 'true',
            status: tr.querySelector('[data-field="status"]')!.textContent,
            standing: tr.querySelector('[data-field="standing"]')!.textContent,
            deviation: tr.querySelector<HTMLElement>('[data-field="deviation"]')!.dataset.value,
            band: tr.querySelector('[data-field="band"]')!.textContent,
            age: tr.querySelector<HTMLElement>('[data-field="age"]')!.dataset.value,
          })),
        };
      }, chainId);
    try {
      for (const chainId of CHAINS) {
        // The page and the record in Redis compared at the same block (a new one may land in between: retry).
        const [table, record] = await until(
          async () => {
            const onPage = await references(chainId);
            const stored = decodeBandRecord(await redis.get(bandKey(chainId)));
            return onPage && stored && onPage.block === stored.block ? ([onPage, stored] as const) : null;
          },
          30_000,
          `chain ${chainId}: the references shown at the block of the stored standing`,
          200,
        );
        expect(table.rows.map((r) => r.base)).toEqual(Object.keys(record.pairs));
        for (const row of table.rows) {
          const state = record.pairs[row.base]!;
          expect(row).toMatchObject({ withheld: false, status: 'in band', standing: 'served' });
          expect(Number(row.deviation)).toBe(state.deviationBps);
          expect(Number(row.age)).toBe(state.ageSeconds);
          expect(row.band).toBe(`−${state.maxDeviationBelowBps}…+${state.maxDeviationAboveBps}`);
        }
      }
      // WETH's curve on 56 moved 2 % up alone (its reference stays): withheld, shown so, and out of the chart.
      const x = swapChain(sys, 56);
      const weth = x.c.tokens.WETH!.address.toLowerCase();
      const before = await curveOn(x, weth);
      const owner = { pub: x.pub, owner: x.owner, router: x.c.contracts.router };
      await setCurve(owner, weth, { ...before, midPriceX18: (before.midPriceX18 * 102n) / 100n });
      await page.waitForSelector(
        `.chain[data-chain="56"] table.references tr[data-base="${weth}"][data-withheld="true"]`,
        {
          timeout: 30_000,
        },
      );
      const withheld = (await references(56))!.rows.find((r) => r.base === weth)!;
      expect(withheld).toMatchObject({ status: 'out of band', standing: 'withheld' });
      expect(Number(withheld.deviation)).toBeGreaterThan(150);
      await until(
        async () => (await shown(56))?.pairs.every((p) => p.base !== weth),
        30_000,
        'WETH out of the chart on 56',
        200,
      );
      // The curve back: served again after its recovery blocks, and shown so.
      await setCurve(owner, weth, before);
      await page.waitForSelector(
        `.chain[data-chain="56"] table.references tr[data-base="${weth}"][data-withheld="false"]`,
        {
          timeout: 60_000,
        },
      );
    } finally {
      redis.disconnect();
    }
  });

  it('behavior: a chain whose node stops is shown unavailable, its chart gone', async () => {
    await sys.devnet.stopChain(STOPPED);
    const card = `.chain[data-chain="${STOPPED}"]`;
    await page.waitForSelector(`${card}[data-state="unavailable"]`, { timeout: BOOK_TTL_MS + 10_000 });
    expect(await page.$$(`${card} svg.depth`)).toHaveLength(0);
    expect(await page.textContent(`${card} .unavailable-note`)).toContain('Unavailable');
    expect(await page.textContent(`${card} [data-field="block"]`)).toBe('—');
    const res = await request(gw).get(`/v2/price?chainId=${STOPPED}`).set('X-API-KEY', key);
    expect(res.status).toBe(503);
    // Its indexer says why; the other chains stay live.
    await page.waitForSelector(`${card} [data-node="down"]`);
    expect(await page.getAttribute('.chain[data-chain="8453"]', 'data-state')).toBe('live');
    expect(pageErrors).toEqual([]);
  });
});
