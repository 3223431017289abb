/**
 * One dust swap ahead of ten real ones, end to end on the devnet (processes as `npm start` runs
 * them: indexer, signer, gateway and the ledger with its markout limit, testkit's startSystem, one
 * anvil chain mining a block a second, a still market moved only by this test).
 *
 * The `dev` integrator signs eleven swaps through the gateway. The signature does not cover
 * amountIn: the first is sent with 1 wei of WETH in, and the router pays 0 for it (a zero leg, no
 * price). The ten others buy WETH, and right after them the test raises the curve's mid by 1 %
 * (the maker sold too cheap). All eleven are mined in one block, so that the ledger settles their
 * markouts in one batch. Then every real swap has its markouts and the dust swap the marker
 * "no markout: zero leg" in `npm run markouts` (JSON, CSV, table; no Infinity or NaN), the
 * ledger's rolling 60 s markout is that of the ten, and the markout limit trips over the ten:
 * the integrator is halted. After the move the chain is moved on to the 60 s horizon, the 25
 * blocks of the limit's horizon mined at once (the indexer and the ledger follow blocks up to
 * 120 s ahead of the wall clock here): the test does not wait out the minute.
 */
import {
  DEFAULT_KEY_PREFIX,
  HaltStore,
  haltScopeName,
  parseRollingMarkout,
  redisKeys,
  type RedisClient,
} from '@pmm/core';
import { decodeSwapCalldata, encodeSwapCalldata } from '@pmm/protocol';
import { HORIZONS, NO_MARKOUT_ZERO_LEG, type MarkoutReport } from '@pmm/operator';
import { moveCurveMid, signFirm, type SwapChain, type System, until } from '@pmm/testkit';
import request from 'supertest';
import type { Hex } from 'viem';
import { inOneBlock, ledgerTestbed, mineAhead, startLedgerSystem } from '../support/ledger-devnet';

jest.setTimeout(600_000);

const CHAIN = 8453;
const INTEGRATOR = 'dev';
const keys = redisKeys(DEFAULT_KEY_PREFIX);
// 25 blocks, mined at once after the test's move of the curve (mineAhead).
const LIMITS = { LIMIT_MARKOUT_FLOOR_BPS: '-20', LIMIT_MARKOUT_HORIZON: '25b', LIMIT_MARKOUT_MIN_SWAPS: '10' };

let sys: System;
let bed: Awaited<ReturnType<typeof ledgerTestbed>>;
let x: SwapChain;
let weth: Hex;
let quote: Hex;
/** The records' server (the ledger, its markouts, the halts), as its administrator. */
let redis: RedisClient;

beforeAll(async () => {
  sys = await startLedgerSystem(CHAIN, LIMITS, undefined, { clockAhead: true });
  bed = await ledgerTestbed(sys, CHAIN, 'markouts-dust-e2e');
  ({ x, weth, quote, redis } = bed);
});

afterAll(async () => {
  await bed?.close();
  await sys?.stop();
});

const markouts = (format: 'json' | 'csv' | 'table') => bed.markouts(format);
const metric = (name: string) => bed.metric(name, INTEGRATOR);

describe('a dust swap ahead of real ones', () => {
  it('behavior: the dust swap has no markout and says so, every real swap has its own, and the markout limit trips over the ten', async () => {
    const usdc = (whole: number) => BigInt(whole) * 10n ** BigInt(x.c.quoteToken.decimals);
    // Signed for 0.01 WETH, sent with 1 wei: the router pays 0 of the quote token for it.
    const signed = decodeSwapCalldata((await signFirm(x, weth, quote, 10n ** 16n, 10n)).calldata);
    const dustCall = encodeSwapCalldata({ ...signed, amountIn: 1n, minAmountOut: 0n }) as Hex;
    // Each its own amount: the audit record of each then matches its swap.
    const realCalls: Hex[] = [];
    for (let i = 0; i < 10; i++) realCalls.push((await signFirm(x, quote, weth, usdc(100 + i), 10n)).calldata);
    const hashes = (await inOneBlock(x, [dustCall, ...realCalls])).map((h) => h.toLowerCase());
    const dust = hashes[0]!;
    const real = hashes.slice(1);
    // The market rises 1 % right after the ten bought WETH: about −100 bps each for the maker.
    await moveCurveMid({ pub: x.pub, owner: x.owner, router: x.c.contracts.router }, weth, 1_010_000n);
    // The chain moved on past the limit's 25b horizon and the 60 s one at once, rather than
    // waiting out the minute (the move above is mined before: inside the horizon, whatever the load).
    await mineAhead(x, dust as Hex, { blocks: 25, seconds: 60 });

    // The markout limit: over the ten real swaps (the dust swap counts in no mean), below the floor.
    const halts = new HaltStore(redis, keys);
    const scope = haltScopeName({ integratorId: INTEGRATOR });
    const halt = await until(
      async () => (await halts.active()).find((h) => haltScopeName(h.scope) === scope && h.trip),
      120_000,
      'the integrator halted by its markout limit',
      250,
    );
    expect(halt.trip).toMatchObject({ limit: 'integrator-markout', threshold: '-20' });
    expect(Number(halt.trip!.value)).toBeLessThan(-50);
    expect(halt.reason).toMatch(/^limit integrator-markout: dev's mean 25b markout on chain 8453 .* over 10 swaps/);
    const refused = await until(
      async () => {
        const res = await request(sys.gateway.url)
          .post('/v2/swap/sign')
          .set('X-API-KEY', sys.gateway.apiKey)
          .set('Content-Type', 'application/json')
          .send(
            JSON.stringify({
              chainId: CHAIN,
              tokenIn: quote,
              tokenOut: weth,
              amountIn: usdc(1).toString(),
              fee: '10',
              userAddress: x.c.testUser.address,
            }),
          );
        return res.status === 503 ? res : undefined;
      },
      20_000,
      'a sign of the halted integrator refused',
      100,
    );
    expect(refused.body).toMatchObject({ error: { code: 'HALTED' } });

    // `npm run markouts`, once every swap is past its 60 s horizon (and short of its 300 s one: null).
    const report = await until(
      async () => {
        const r = JSON.parse((await markouts('json')).out) as MarkoutReport;
        const ours = r.swaps.filter((s) => real.includes(s.txHash));
        return ours.length === 10 && ours.every((s) => s.markoutsBps['60s'] !== null) && r;
      },
      150_000,
      'every real swap past its 60 s horizon',
      1_000,
    );
    const json = await markouts('json');
    expect([json.code, json.out]).toEqual([0, expect.not.stringMatching(/Infinity|NaN/)]);
    const line = report.swaps.find((s) => s.txHash === dust)!;
    expect(line).toMatchObject({ integratorId: INTEGRATOR, side: 'bid', quoteAmount: '0', executionPrice: '0' });
    for (const h of HORIZONS) {
      expect([line.markoutsBps[h.key], line.markoutsQuote[h.key]]).toEqual([NO_MARKOUT_ZERO_LEG, NO_MARKOUT_ZERO_LEG]);
      for (const s of report.swaps.filter((s) => real.includes(s.txHash))) {
        const [bps, quoted] = [s.markoutsBps[h.key], s.markoutsQuote[h.key]];
        if (h.key === '300s') expect([bps, quoted]).toEqual([null, null]);
        else expect([Number.isFinite(bps), Number.isFinite(quoted)]).toEqual([true, true]);
      }
    }
    for (const s of report.swaps.filter((s) => real.includes(s.txHash)))
      expect(s.markoutsBps['25b'] as number).toBeLessThan(-50);
    const dev = report.aggregates.find((a) => a.by === 'integrator' && a.key === INTEGRATOR)!;
    expect([dev.count, dev.zeroLeg, dev.markoutsBps['25b']!.count]).toEqual([11, 1, 10]);

    const csv = await markouts('csv');
    expect(csv.out).not.toMatch(/Infinity|NaN|null/);
    expect(csv.out.split('\n').find((l) => l.includes(dust))).toContain(`,${NO_MARKOUT_ZERO_LEG},`);
    const table = await markouts('table');
    expect(table.out).not.toMatch(/Infinity|NaN|null/);
    expect(table.out).toContain(NO_MARKOUT_ZERO_LEG);
    expect(table.out).toMatch(/^integrator\s+dev\s+11\s.*\s1$/m);

    // The ledger's rolling 60 s markout: the ten real swaps' only, stored and exported as numbers.
    await until(async () => (await metric('ledger_markout_60s_swaps')) === '10', 30_000, 'the rolling markout', 250);
    const rolling = parseRollingMarkout((await redis.hget(keys.ledgerMarkouts(CHAIN), INTEGRATOR))!);
    expect(rolling.bps).toHaveLength(10);
    expect(Number.isFinite(Number(await metric('ledger_markout_60s_bps')))).toBe(true);
  });
});
