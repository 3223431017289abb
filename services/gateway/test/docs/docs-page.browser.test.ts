/**
 * `GET /docs` in a real headless browser (Debian's Chromium through playwright-core), against a
 * served gateway over a real Redis: the page renders the OpenAPI document with every endpoint,
 * every error code of the API (the protocol's own list) in the operations' responses and the curl
 * examples, without an API key; it requests nothing from another origin (the assets ship with
 * the gateway) and breaks no rule of its Content-Security-Policy.
 */
import { ERROR_CODES } from '@pmm/protocol';
import { launchBrowser, type Browser, type Page } from '@pmm/testkit';
import type { Gateway } from '@pmm/gateway';
import { ROUTES } from '../../src/http/public-routes';
import { harness, type Harness } from '../support/harness';

let h: Harness;
let gw: Gateway;
let browser: Browser;
let page: Page;
let base: string;
let text: string;
const requested: string[] = [];
/** Console errors: a CSP violation, a failed load or a script error all show there. */
const consoleErrors: string[] = [];
const pageErrors: string[] = [];

beforeAll(async () => {
  h = await harness();
  gw = await h.gateway();
  base = await h.listen(gw.app);
  browser = await launchBrowser();
  page = await browser.newPage();
  // Every request the page starts, those the CSP then blocks included.
  page.on('request', (r) => requested.push(r.url()));
  page.on('console', (m) => {
    if (m.type() === 'error') consoleErrors.push(m.text());
  });
  page.on('pageerror', (e) => pageErrors.push(e.message));
  await page.goto(`${base}/docs`);
  // Redoc renders after fetching the document: wait for the last operation.
  await page.locator('[data-section-id="operation/signQuoteV1"]').waitFor({ timeout: 60_000 });
  text = await page.evaluate(() => document.body.innerText);
}, 90_000);

afterAll(async () => {
  await browser?.close();
  await h?.cleanup();
});

/** The section of one operation. */
const operation = (operationId: string) => page.locator(`[data-section-id="operation/${operationId}"]`).first();

/** An operation's curl samples, label → command, as shown when each one's tab is selected. */
async function curlSamples(operationId: string): Promise<Record<string, string>> {
  const section = operation(operationId);
  const tabs = section.locator('[role="tab"]', { hasText: /^curl/ });
  const samples: Record<string, string> = {};
  for (let i = 0; i < (await tabs.count()); i++) {
    const tab = tabs.nth(i);
    await tab.click();
    const panel = section.locator(`[role="tabpanel"][id="${await tab.getAttribute('aria-controls')}"]`);
    samples[await tab.innerText()] = await panel.locator('pre').innerText();
  }
  return samples;
}

describe('GET /docs in a browser', () => {
  it('behavior: shows every endpoint, and price, stream and sign each with its method and path', async () => {
    for (const route of Object.values(ROUTES)) expect(text).toContain(route.path);
    const sections: [id: string, method: string, path: string][] = [
      ['getPrice', 'GET', ROUTES.price.path],
      ['getPriceStream', 'GET', ROUTES.priceStream.path],
      ['signQuote', 'POST', ROUTES.sign.path],
    ];
    for (const [id, method, path] of sections) {
      const shown = await operation(id).innerText();
      // Redoc shows the method and the path on their own lines, at the top of the section.
      const line = new RegExp(`^${method}\\n${path.replace(/\//g, '\\/')}$`, 'mi').test(shown);
      expect({ id, line }).toEqual({ id, line: true });
    }
  });

  it("behavior: every error code of the protocol's table is shown in the operations' responses", async () => {
    expect(ERROR_CODES.length).toBeGreaterThan(10);
    const shown = (await page.locator('[data-section-id^="operation/"]').allInnerTexts()).join('\n');
    expect(ERROR_CODES.filter((code) => !new RegExp(`\\b${code}\\b`).test(shown))).toEqual([]);
  });

  it('behavior: the curl examples of price, stream and sign (with and without amountIn), and the deadline of a signed quote', async () => {
    const price = await curlSamples('getPrice');
    expect(price.curl).toMatch(/^curl -sS -H "X-API-KEY: \$PMM_API_KEY" '.*\/v2\/price\?chainId=8453'$/);
    const stream = await curlSamples('getPriceStream');
    expect(stream.curl).toMatch(/^curl -N .*\/v2\/price\/stream\?chainId=8453'$/);
    expect(stream['curl (reconnect)']).toContain("-H 'Last-Event-ID: ");
    const sign = await curlSamples('signQuote');
    expect(sign['curl (with amountIn: calldata)']).toMatch(/-X POST '.*\/v2\/swap\/sign'[^]*"amountIn":"\d+"/);
    expect(sign['curl (signature only)']).toMatch(/-X POST '.*\/v2\/swap\/sign'[^]*"userAddress":/);
    expect(sign['curl (signature only)']).not.toContain('amountIn');
    for (const source of [...Object.values(price), ...Object.values(stream), ...Object.values(sign)]) {
      expect(source).toContain('-H "X-API-KEY: $PMM_API_KEY"');
    }
    expect(text).toContain('deadline');
  });

  it('security: the page requests nothing from another origin, breaks no CSP rule, and the renderer runs without errors', () => {
    expect(requested).toEqual(
      expect.arrayContaining([`${base}/docs`, `${base}/docs/openapi.json`, expect.stringMatching(/\/docs\/assets\//)]),
    );
    expect(requested.filter((u) => !u.startsWith(`${base}/`) && !u.startsWith(`blob:${base}/`))).toEqual([]);
    expect(consoleErrors).toEqual([]);
    expect(pageErrors).toEqual([]);
  });
});
