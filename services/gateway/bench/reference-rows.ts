/**
 * The price and sign rows with references on and off, side by side in one run
 * (`BENCH_GATEWAY_ONLY=references`, and at the end of a full `npm run bench gateway`): two systems
 * as `npm start` runs them (startMainSystem), on the same Redis under two prefixes, one chain:
 *
 * - on, as shipped: each pair's devnet feed is its reference, so the signer reads each pair's
 *   standing (published with the book; here written as an indexer writes it after a block in band,
 *   with the reference's price and the default band of 50 bps) before every sign, and holds every
 *   firm quote's price to the band;
 * - off: the chains file names no feed (testkit's `references: false`): no standing is read.
 *
 * Rows, in rounds whose order alternates (a busy phase of the shared machine lands on both sides):
 * one client's p50/p99 of price, sign and sign with amountIn, and sign paced at 500/s with the
 * gateway's and the signer's CPU per request. Printed: each system's medians over the rounds and
 * the ratio on / off. BENCH_REFERENCE_ROUNDS (default 4) rounds of BENCH_SECONDS each. A figure,
 * not a test: nothing is asserted.
 */
import { readFileSync } from 'node:fs';
import {
  bookBandKey,
  createRedis,
  encodeBandRecord,
  redisKeys,
  redisReady,
  type PairBandState,
  type RedisClient,
} from '@pmm/core';
import { seedPlan, type ChainStack } from '@pmm/devnet';
import { processCpuSeconds } from '@pmm/testkit';
import { seed, signBody, startMainSystem, stopEverything } from './bench-systems';
import { closedLoop, openLoop, type LatencyFigures, type LoadRequest } from './open-loop';

const SIGN_PATH = '/v2/swap/sign';
const PRICE_PATH = '/v2/price?chainId=8453';
/** The paced row's rate, per second. */
const PACED = 500;

type Side = 'on' | 'off';
type CaseName = 'price' | 'sign' | 'signFirm' | 'signPaced';
interface Measured {
  figures: LatencyFigures;
  /** The gateway's and the signer's CPU per request, µs (the paced row). */
  cpuUs?: number;
}

/**
 * Each pair's standing as an indexer writes it after a block where the curve agrees with its
 * feed: in band, enforce, the default band, the reference's price (the seed plan's mid).
 */
async function standingInBand(redis: RedisClient, prefix: string, chain: ChainStack): Promise<void> {
  const key = bookBandKey(redisKeys(prefix).book(8453));
  const stored = JSON.parse((await redis.get(key))!) as { block: number; time: number; pairs: Record<string, unknown> };
  const plan = seedPlan(8453);
  const pairs: Record<string, PairBandState> = {};
  for (const base of Object.keys(stored.pairs)) {
    const symbol = chain.baseTokens.find((t) => t.address.toLowerCase() === base)?.symbol;
    const planned = plan.baseTokens.find((t) => t.symbol === symbol);
    pairs[base] = {
      status: 'in_band',
      mode: 'enforce',
      withheld: false,
      served: true,
      streak: 0,
      since: stored.block,
      deviationBps: 0,
      ageSeconds: 1,
      maxDeviationBelowBps: 50,
      maxDeviationAboveBps: 50,
      ...(planned ? { referencePrice: Number(planned.midPrice), curvePrice: Number(planned.midPrice) } : {}),
    };
  }
  await redis.set(key, encodeBandRecord({ block: stored.block, time: stored.time, pairs }));
}

export async function referenceRows(redis: RedisClient, redisUrl: string, prefix: string, seconds: number) {
  const systems = {} as Record<Side, { requests: Record<CaseName, LoadRequest>; pids: number[] }>;
  for (const side of ['on', 'off'] as const) {
    const at = `${prefix}-ref-${side}`;
    const { apiKey } = await seed(redis, at);
    const { sys } = await startMainSystem(redis, redisUrl, at, {}, side === 'off' ? { references: false } : {});
    const chain = sys.chain(8453);
    // What the services read: feeds in the chains file on one side, none on the other.
    const file = JSON.parse(readFileSync(sys.configFile, 'utf8')) as {
      chains: Record<string, { references?: Record<string, unknown> }>;
    };
    const feeds = Object.keys(file.chains['8453']?.references ?? {}).length;
    if ((side === 'on') !== feeds > 0) throw new Error(`references ${side}: the chains file names ${feeds} feeds`);
    if (side === 'on') await standingInBand(redis, at, chain);
    const post = (body: string): LoadRequest => ({
      url: `${sys.gateway.url}${SIGN_PATH}`,
      method: 'POST',
      headers: { 'x-api-key': apiKey, 'content-type': 'application/json' },
      body,
    });
    // Inside the first ask tier: the firm price is the curve's, within the band.
    const firm = signBody(chain, 1_000n * 10n ** BigInt(chain.quoteToken.decimals));
    systems[side] = {
      requests: {
        price: { url: `${sys.gateway.url}${PRICE_PATH}`, method: 'GET', headers: { 'x-api-key': apiKey } },
        sign: post(signBody(chain)),
        signFirm: post(firm),
        signPaced: post(signBody(chain)),
      },
      pids: [sys.processesOf('gateway')[0]!.child.pid!, sys.processesOf('signer')[0]!.child.pid!],
    };
    for (const name of ['sign', 'signFirm'] as const) {
      const r = systems[side].requests[name];
      const res = await fetch(r.url, { method: 'POST', headers: r.headers, body: r.body });
      if (res.status !== 200) throw new Error(`references ${side}: ${name}: ${res.status} ${await res.text()}`);
    }
  }
  // Warm-up (JIT, sockets): not measured.
  for (const side of ['on', 'off'] as const) {
    await openLoop(systems[side].requests.sign, PACED, 3);
    await openLoop(systems[side].requests.signFirm, 100, 2);
    await openLoop(systems[side].requests.price, PACED, 1);
  }
  const rounds = Number(process.env.BENCH_REFERENCE_ROUNDS ?? 4);
  const results: Record<Side, Record<CaseName, Measured[]>> = {
    on: { price: [], sign: [], signFirm: [], signPaced: [] },
    off: { price: [], sign: [], signFirm: [], signPaced: [] },
  };
  for (let round = 0; round < rounds; round++) {
    const order: Side[] = round % 2 === 0 ? ['on', 'off'] : ['off', 'on'];
    for (const name of ['price', 'sign', 'signFirm'] as const)
      for (const side of order)
        results[side][name].push({ figures: await closedLoop(systems[side].requests[name], seconds) });
    for (const side of order) {
      const { pids, requests } = systems[side];
      const cpu0 = pids.map(processCpuSeconds);
      const figures = await openLoop(requests.signPaced, PACED, seconds);
      const cpu = pids.reduce((t, pid, i) => t + processCpuSeconds(pid) - cpu0[i]!, 0);
      results[side].signPaced.push({ figures, cpuUs: (cpu * 1e6) / Math.max(1, figures.count) });
    }
  }
  const median = (xs: number[]) => {
    const v = [...xs].sort((a, b) => a - b);
    return (v[(v.length - 1) >> 1]! + v[v.length >> 1]!) / 2;
  };
  const ms = (v: number) => (v < 10 ? v.toFixed(2) : v.toFixed(1));
  console.log(
    `\nreferences on / off (one chain; on: the signer reads each pair's standing and holds firm quotes to the band; ` +
      `off: no feed in the chains file); medians over ${rounds} rounds of ${seconds} s, order alternating`,
  );
  console.log(
    'row                      |   on p50 |   on p99 |  off p50 |  off p99 | p50 on/off | p99 on/off | failures on, off | CPU µs/req on, off',
  );
  const labels: Record<CaseName, string> = {
    price: 'price, one client',
    sign: 'sign, one client',
    signFirm: 'sign amountIn, 1 client',
    signPaced: `sign, paced ${PACED}/s`,
  };
  for (const name of ['price', 'sign', 'signFirm', 'signPaced'] as const) {
    const of = (side: Side, f: (m: Measured) => number) => median(results[side][name].map(f));
    const [onP50, onP99, offP50, offP99] = [
      of('on', (m) => m.figures.p50),
      of('on', (m) => m.figures.p99),
      of('off', (m) => m.figures.p50),
      of('off', (m) => m.figures.p99),
    ];
    const failures = (side: Side) => results[side][name].reduce((t, m) => t + m.figures.failures, 0);
    const cpu =
      name === 'signPaced' ? `${of('on', (m) => m.cpuUs!).toFixed(0)}, ${of('off', (m) => m.cpuUs!).toFixed(0)}` : '-';
    console.log(
      `${labels[name].padEnd(24)} | ${ms(onP50).padStart(8)} | ${ms(onP99).padStart(8)} | ${ms(offP50).padStart(8)} | ${ms(offP99).padStart(8)} | ` +
        `${(onP50 / offP50).toFixed(2).padStart(10)} | ${(onP99 / offP99).toFixed(2).padStart(10)} | ${`${failures('on')}, ${failures('off')}`.padStart(16)} | ${cpu.padStart(18)}`,
    );
  }
  for (const side of ['on', 'off'] as const) {
    const left = await redis.keys(`${prefix}-ref-${side}:*`);
    if (left.length) await redis.del(...left);
  }
}

/** `BENCH_GATEWAY_ONLY=references npm run bench gateway`: these rows alone. */
export async function referencesOnly(redisUrl: string, prefix: string, seconds: number) {
  const redis = createRedis(redisUrl, { name: 'bench-setup' });
  try {
    await redisReady(redis);
    await referenceRows(redis, redisUrl, prefix, seconds);
  } finally {
    await stopEverything();
    redis.disconnect();
  }
}
