/**
 * The reference drills through the whole stack (devnet with a moving market, indexers, signer,
 * gateway, as `npm start` runs them), on every chain of one system (8453, 56 whose quote token
 * has 18 decimals, and 4663): for each fault (a frozen curve while the market walks, a curve
 * skewed by 200 bps, one skewed by ×10¹², a stopped feed) the pair leaves `GET /v2/price` and its signs are refused, 503
 * PAIR_UNAVAILABLE with Retry-After and no reason, from the block that shows it; not one of its
 * signs succeeds once that block's book is out (give or take the signer's lag behind the book:
 * the book's notice and one read, STANDING_MAX_AGE_MS at most); the other pair is signed
 * throughout; and once the fault is gone the pair is back, in the book and signed.
 */
import { STANDING_MAX_AGE_MS } from '@pmm/signer';
import { startSystem, until, type System } from '@pmm/testkit';
import type { OrderbookResponse } from '@pmm/protocol';
import type { ChainStack, MarketControls } from '@pmm/devnet';

jest.setTimeout(600_000);

const CHAINS = [8453, 56, 4663] as const;
let sys: System;

beforeAll(async () => {
  sys = await startSystem({
    chains: [...CHAINS],
    blockIntervalMs: 500,
    // 15 bps a block: a frozen curve crosses the 50 bps band within some seconds.
    market: { volatilityBps: 15, seed: 8, feed: { deviationBps: 10, heartbeatSeconds: 2 } },
    env: {
      // Six sign loops and the book polled on three chains: far past the default rate of 600 a minute.
      gateway: { DEFAULT_RATE_LIMIT: '1000000' },
      indexer: {
        REFERENCE_MAX_DEVIATION_BELOW_BPS: '50',
        REFERENCE_MAX_DEVIATION_ABOVE_BPS: '50',
        REFERENCE_MAX_AGE_SECONDS: '6',
        REFERENCE_RECOVERY_BLOCKS: '3',
      },
    },
  });
});

afterAll(async () => {
  await sys?.stop();
});

async function price(chainId: number): Promise<OrderbookResponse | undefined> {
  const res = await fetch(`${sys.gateway.url}/v2/price?chainId=${chainId}`, {
    headers: { 'x-api-key': sys.gateway.apiKey },
  });
  return res.status === 200 ? ((await res.json()) as OrderbookResponse) : undefined;
}

interface SignAnswer {
  status: number;
  code?: string;
  message?: string;
  retryAfter: string | null;
  /** When the request was sent (ms). */
  sentAt: number;
}

async function sign(c: ChainStack, base: string): Promise<SignAnswer> {
  const sentAt = Date.now();
  const res = await fetch(`${sys.gateway.url}/v2/swap/sign`, {
    method: 'POST',
    headers: { 'x-api-key': sys.gateway.apiKey, 'content-type': 'application/json' },
    body: JSON.stringify({
      chainId: c.chainId,
      tokenIn: c.quoteToken.address,
      tokenOut: base,
      userAddress: c.testUser.address,
      fee: '0',
    }),
  });
  const body = (await res.json()) as { error?: { code: string; message: string } };
  return {
    status: res.status,
    code: body.error?.code,
    message: body.error?.message,
    retryAfter: res.headers.get('retry-after'),
    sentAt,
  };
}

const listed = (book: OrderbookResponse | undefined, base: string) =>
  !!book?.pairs.some((p) => p.baseToken.toLowerCase() === base.toLowerCase());

/** Signs `base` every 100 ms until stopped (within the development key's rate): every answer, with when it was asked. */
function signLoop(c: ChainStack, base: string) {
  const answers: SignAnswer[] = [];
  let running = true;
  const done = (async () => {
    while (running) {
      answers.push(await sign(c, base));
      await new Promise((r) => setTimeout(r, 100));
    }
  })();
  return {
    answers,
    stop: async () => {
      running = false;
      await done;
    },
  };
}

async function drill(
  chainId: number,
  name: string,
  fault: (m: MarketControls, base: string) => void,
  undo: (m: MarketControls, base: string) => void,
) {
  const c = sys.chain(chainId);
  const market = sys.devnet.market(chainId);
  const weth = c.tokens.WETH!.address;
  const wbtc = c.tokens.WBTC!.address;
  await until(
    async () => listed(await price(chainId), weth) && listed(await price(chainId), wbtc),
    60_000,
    `${name}: both pairs served`,
  );
  expect((await sign(c, weth)).status).toBe(200);
  const loop = signLoop(c, weth);
  const other = signLoop(c, wbtc);
  fault(market, weth);
  // The first book without the pair, and the moment it was seen.
  const gone = await until(
    async () => {
      const book = await price(chainId);
      return book && !listed(book, weth) && { book, seenAt: Date.now() };
    },
    120_000,
    `${name}: chain ${chainId}: WETH leaves /v2/price`,
    100,
  );
  expect(listed(gone.book, wbtc)).toBe(true);
  // The gateway and the signer each follow the book at its notice: a sign sent as the gateway
  // serves the new book can reach the signer a read before it has the standing (seen once in a
  // full run: a 200 at once). From STANDING_MAX_AGE_MS after, the signer cannot still rely on the
  // read before.
  const followedAt = gone.seenAt + STANDING_MAX_AGE_MS;
  await new Promise((r) => setTimeout(r, Math.max(0, followedAt - Date.now())));
  const refused = await sign(c, weth);
  expect(refused).toMatchObject({ status: 503, code: 'PAIR_UNAVAILABLE' });
  expect(Number(refused.retryAfter)).toBeGreaterThanOrEqual(1);
  expect(refused.message).not.toMatch(/reference|band|price|stale|feed|oracle|deviation/i);
  undo(market, weth);
  const back = await until(
    async () => listed(await price(chainId), weth),
    120_000,
    `${name}: chain ${chainId}: WETH back`,
    100,
  );
  expect(back).toBe(true);
  await loop.stop();
  await other.stop();
  // Not one signature for the pair from the moment the signer followed its book out until it came back...
  const from = loop.answers.findIndex((a) => a.sentAt >= followedAt);
  const firstBack = loop.answers.findIndex((a, i) => i >= from && a.status === 200);
  const outage = loop.answers.slice(from, firstBack < 0 ? undefined : firstBack);
  expect(outage.length).toBeGreaterThan(0);
  for (const a of outage) expect(a).toMatchObject({ status: 503, code: 'PAIR_UNAVAILABLE' });
  // Once back, it stays back: the pair came back after its recovery blocks, not on the edge.
  if (firstBack >= 0) for (const a of loop.answers.slice(firstBack)) expect(a.status).toBe(200);
  // ...while the other pair was signed throughout.
  expect(other.answers.length).toBeGreaterThan(0);
  for (const a of other.answers) expect(a.status).toBe(200);
  // And the pair signs again.
  expect((await sign(c, weth)).status).toBe(200);
}

it('drills on 8453, 56 and 4663: a frozen curve, a skew by 200 bps, a skew by ×10¹², a stopped feed', async () => {
  await Promise.all(
    CHAINS.map(async (chainId) => {
      await drill(
        chainId,
        'frozen curve',
        (m, base) => m.stopEngine(base),
        (m, base) => m.startEngine(base),
      );
      await drill(
        chainId,
        'skew by 200 bps',
        (m, base) => m.skewCurve(base, { bps: 200 }),
        (m, base) => m.skewCurve(base, undefined),
      );
      await drill(
        chainId,
        'skew by ×10¹²',
        (m, base) => m.skewCurve(base, { times: 10n ** 12n }),
        (m, base) => m.skewCurve(base, undefined),
      );
      // The curve stops with the feed: only the reference's age grows.
      await drill(
        chainId,
        'stopped feed',
        (m, base) => (m.stopEngine(base), m.stopFeed(base)),
        (m, base) => (m.startFeed(base), m.startEngine(base)),
      );
    }),
  );
});
