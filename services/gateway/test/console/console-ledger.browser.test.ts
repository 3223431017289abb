/**
 * The operator console's ledger table in headless Chromium: a gateway on a real Redis, the
 * chain's ledger written as the ledger process writes it (its store's commits and rollback, its
 * rolling markouts: support/ledger-writer.ts). The page lists each integrator's swaps, notional,
 * reverted calls, fill rate and unused share of its firm signatures judged, and rolling 60 s markout of the day as the ledger keeps them, follows new blocks and a reorg,
 * marks the maker's losses, shows the ledger's block on the chain's card, and shows nothing as
 * current while its stream is down.
 */
/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
import type { Gateway } from '@pmm/gateway';
import { launchBrowser, sampleLedgerRevert, until } from '@pmm/testkit';
import { harness, type Harness } from '../support/harness';
import { awayFromMidnight, ledgerWriter } from '../support/ledger-writer';

jest.setTimeout(120_000);

type Browser = Awaited<ReturnType<typeof launchBrowser>>;
type Page = Awaited<ReturnType<Browser['newPage']>>;

let h: Harness;
let gw: Gateway;
let ops: string;
let browser: Browser;
let page: Page;
const pageErrors: string[] = [];

beforeAll(async () => {
  h = await harness();
  gw = await h.gateway({ servedChains: [8453, 56] });
  ops = await h.listen(gw.opsApp);
  browser = await launchBrowser();
  page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  page.on('pageerror', (err) => pageErrors.push(err.message));
  page.on('console', (msg) => {
    if (msg.type() === 'error') pageErrors.push(msg.text());
  });
});

afterAll(async () => {
  await browser?.close();
  await h?.cleanup();
});

/** The ledger table as the page shows it: one array of cell texts per row. */
function rows(): Promise<string[][]> {
  return page.evaluate(() =>
    [...document.querySelectorAll('#ledger tbody tr')].map((tr) =>
      [...tr.querySelectorAll('td')].map((td) => td.textContent ?? ''),
    ),
  );
}

/** Waits until the table shows exactly `expected` (the status comes every 2 s). */
async function shows(expected: string[][], what: string): Promise<void> {
  let last: string[][] = [];
  try {
    await until(async () => JSON.stringify((last = await rows())) === JSON.stringify(expected), 20_000, what, 100);
  } catch (err) {
    throw new Error(`${String(err)}\nthe table shows ${JSON.stringify(last)}`);
  }
}

describe("the operator console's ledger table in a browser", () => {
  it('behavior: lists per chain and integrator the swaps, notional, reverted calls, fill rate, unused share and 60 s markout of the day; follows new blocks and a reorg', async () => {
    const ledger = ledgerWriter(h.redis, h.keys, 8453);
    await ledger.registry();
    await page.goto(`${ops}/console`);
    await shows([['', 'no executed swaps today']], 'an empty table before any swap');
    expect(await page.textContent('.chain[data-chain="8453"] [data-field="ledger"]')).toBe(
      'no ledger has written on this chain',
    );

    await awayFromMidnight();
    const now = Math.floor(Date.now() / 1_000);
    // Yesterday's swaps are not today's.
    await ledger.commit(10, [ledger.entry(10, now - 86_400, 'beta', '999999')]);
    // acme's two firm signatures judged: one executed, one unused.
    await ledger.commit(
      100,
      [
        ledger.entry(100, now, 'acme', '2500.5'),
        ledger.entry(100, now, 'acme', '2000'),
        ledger.entry(100, now, 'beta', '1200'),
        ledger.entry(100, now, '', '7.25'),
      ],
      [],
      [ledger.fate('acme', 'executed', now), ledger.fate('acme', 'unused', now)],
    );
    await ledger.markouts([
      { integratorId: 'acme', bps: -12.5 },
      { integratorId: 'acme', bps: -7.5 },
    ]);
    await shows(
      [
        ['8453', 'acme', '2', '4,500.50 USDC', '0', '50 % (1 of 2)', '50 % (1 of 2)', '-10.0 bps (2 swaps)'],
        ['8453', 'beta', '1', '1,200.00 USDC', '0', '–', '–', 'no swap 60 s old yet'],
        ['8453', '(unattributed)', '1', '7.25 USDC', '0', '–', '–', 'no swap 60 s old yet'],
      ],
      'the ledger of block 100',
    );
    // The maker's loss stands out.
    expect(await page.getAttribute('#ledger tr[data-integrator="acme"] [data-field="markout"]', 'data-sign')).toBe(
      'negative',
    );
    expect(await page.textContent('.chain[data-chain="8453"] [data-field="ledger"]')).toBe('block 100');
    expect(await page.textContent('#ledger-day')).toBe(`${new Date(now * 1_000).toISOString().slice(0, 10)} UTC`);

    // A new block, and beta's first markout (positive: the maker gained).
    const betaFate = ledger.fate('beta', 'executed', now);
    await ledger.commit(
      101,
      [ledger.entry(101, now, 'beta', '4000')],
      [sampleLedgerRevert(101, now, { integratorId: 'beta' })],
      [betaFate],
    );
    await ledger.markouts([{ integratorId: 'beta', bps: 3.25 }]);
    await shows(
      [
        ['8453', 'beta', '2', '5,200.00 USDC', '1', '100 % (1 of 1)', '0 % (0 of 1)', '3.3 bps (1 swap)'],
        ['8453', 'acme', '2', '4,500.50 USDC', '0', '50 % (1 of 2)', '50 % (1 of 2)', '-10.0 bps (2 swaps)'],
        ['8453', '(unattributed)', '1', '7.25 USDC', '0', '–', '–', 'no swap 60 s old yet'],
      ],
      'block 101 counted, with its reverted call and firm signature',
    );
    expect(await page.getAttribute('#ledger tr[data-integrator="beta"] [data-field="markout"]', 'data-sign')).toBe(
      'positive',
    );

    // A reorg takes block 101 back, and the judgement made in it: so does the table.
    await ledger.rollback(100, [betaFate]);
    await shows(
      [
        ['8453', 'acme', '2', '4,500.50 USDC', '0', '50 % (1 of 2)', '50 % (1 of 2)', '-10.0 bps (2 swaps)'],
        ['8453', 'beta', '1', '1,200.00 USDC', '0', '–', '–', '3.3 bps (1 swap)'],
        ['8453', '(unattributed)', '1', '7.25 USDC', '0', '–', '–', 'no swap 60 s old yet'],
      ],
      'block 101 orphaned',
    );
    expect(await page.textContent('.chain[data-chain="8453"] [data-field="ledger"]')).toBe('block 100');
    expect(pageErrors).toEqual([]);
  });

  it('behavior: while its stream is down the page shows no ledger figure as current', async () => {
    await shows(
      [
        ['8453', 'acme', '2', '4,500.50 USDC', '0', '50 % (1 of 2)', '50 % (1 of 2)', '-10.0 bps (2 swaps)'],
        ['8453', 'beta', '1', '1,200.00 USDC', '0', '–', '–', '3.3 bps (1 swap)'],
        ['8453', '(unattributed)', '1', '7.25 USDC', '0', '–', '–', 'no swap 60 s old yet'],
      ],
      'the table before the stream goes',
    );
    gw.closeStreams();
    await shows([['', 'unknown: the console lost its stream']], 'the table emptied when the stream is lost');
  });
});
