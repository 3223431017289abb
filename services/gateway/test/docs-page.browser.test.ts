/**
 * `GET /docs` in a real headless browser (Debian's Chromium through playwright-core), against a
 * served gateway over a real Redis: the page renders the OpenAPI document with every endpoint,
 * every error code of the API (the protocol's own list) and the curl examples, without an API
 * key, and nothing it receives comes from another origin (the assets ship with the gateway).
 */
import { ERROR_CODES } from '@pmm/protocol';
import { launchBrowser, type Browser, type Page } from '@pmm/testkit';
import type { Gateway } from '@pmm/gateway';
import { harness, type Harness } from './support/harness';

let h: Harness;
let gw: Gateway;
let browser: Browser;
let page: Page;
let base: string;
let text: string;
const responses: string[] = [];
const failed: string[] = [];
const pageErrors: string[] = [];

beforeAll(async () => {
  h = await harness();
  gw = await h.gateway();
  base = await h.listen(gw.app);
  browser = await launchBrowser();
  page = await browser.newPage();
  page.on('response', (r) => responses.push(r.url()));
  page.on('requestfailed', (r) => failed.push(r.url()));
  page.on('pageerror', (e) => pageErrors.push(e.message));
  await page.goto(`${base}/docs`);
  // Redoc renders after fetching the document: wait for the last operation's heading.
  await page
    .locator('h2', { hasText: 'Sign a swap quote on chain 8453 (legacy)' })
    .first()
    .waitFor({ timeout: 60_000 });
  text = await page.evaluate(() => document.body.innerText);
}, 90_000);

afterAll(async () => {
  await browser?.close();
  await h?.cleanup();
});

describe('GET /docs in a browser', () => {
  it('behavior: shows every endpoint with its method, without an API key', () => {
    for (const path of [
      '/v2/price',
      '/v2/price/stream',
      '/v2/swap/sign',
      '/v2/openapi.json',
      '/v1/price',
      '/v1/swap/sign',
    ])
      expect(text).toContain(path);
    expect(text).toMatch(/get\s*\/v2\/price/i);
    expect(text).toMatch(/post\s*\/v2\/swap\/sign/i);
  });

  it('behavior: shows every error code of the API', () => {
    expect(ERROR_CODES.length).toBeGreaterThan(10);
    expect(ERROR_CODES.filter((code) => !text.includes(code))).toEqual([]);
  });

  it('behavior: shows the curl examples and the deadline of a signed quote', () => {
    expect(text).toContain('curl -sS');
    expect(text).toContain('X-API-KEY: $PMM_API_KEY');
    expect(text).toContain('deadline');
  });

  it('security: everything the page received came from the gateway itself; the renderer runs without errors', () => {
    expect(responses.length).toBeGreaterThanOrEqual(3);
    expect(responses.filter((u) => !u.startsWith(base) && !u.startsWith('blob:') && !u.startsWith('data:'))).toEqual(
      [],
    );
    // Redoc's footer credit points an <img> at its CDN; the page's CSP blocks it (the only
    // request that leaves for another origin, and it never completes).
    expect(failed.filter((u) => !u.startsWith(base))).toEqual(
      failed.filter((u) => u === 'https://cdn.redoc.ly/redoc/logo-mini.svg'),
    );
    expect(pageErrors).toEqual([]);
  });
});
