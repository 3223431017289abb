/**
 * `npm run bench soak`: one million mixed requests against the local stack, started as
 * `npm start` starts it (testkit's startStack: scripts/start.mjs, free ports, 500 ms
 * blocks, a private Redis): half GET /v2/price on the three chains, three tenths valid
 * POST /v2/swap/sign with `amountIn`, and a fifth bad input (unknown query parameter,
 * malformed or duplicated-key JSON, a gzip body that does not decode, an unknown field, an
 * invalid value, a wrong or fresh random API key, an unknown path, an oversized body).
 *
 * Every 100,000 requests it prints the RSS and V8 heap used of the gateway and the signer
 * (their own /metrics: process_resident_memory_bytes, nodejs_heap_size_used_bytes, and the
 * old space alone: young-generation garbage makes the whole heap swing by tens of MB), then
 * start, peak and end per service, a sample after 20 s idle, and the slope of a least-squares
 * line through the samples after warm-up (the first 200,000 requests), in MB per 100,000
 * requests. Flat means bounded: a slope within noise, not a steady climb.
 *
 * SOAK_REQUESTS (default 1,000,000), SOAK_CONNECTIONS (default 32) change the run.
 */
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import autocannon from 'autocannon';
import { freePort, startStack } from '@pmm/testkit';

const TOTAL = Number(process.env.SOAK_REQUESTS ?? 1_000_000);
const STEP = 100_000;
const CONNECTIONS = Number(process.env.SOAK_CONNECTIONS ?? 32);
const WARM_UP = 200_000;
const IDLE_MS = 20_000;

interface ChainInfo {
  chainId: number;
  quoteToken: { address: string; decimals: number };
  baseTokens: { address: string }[];
  testUser: { address: string };
}

interface Memory {
  rss: number;
  /** V8 heap used, all spaces (includes young-generation garbage not yet collected). */
  heap: number;
  /** V8 old space used: what survived young collections, the figure a leak makes climb. */
  old: number;
}

interface Sample {
  requests: number;
  gateway: Memory;
  signer: Memory;
}

const MB = 1024 * 1024;

function metric(text: string, name: string, label = ''): number {
  const line = text
    .split('\n')
    .find((l) => (l.startsWith(`${name}{`) || l.startsWith(`${name} `)) && l.includes(label));
  if (!line) throw new Error(`metric ${name} ${label} not found`);
  return Number(line.slice(line.lastIndexOf(' ') + 1));
}

async function memory(url: string): Promise<Memory> {
  const text = await (await fetch(url)).text();
  return {
    rss: metric(text, 'process_resident_memory_bytes'),
    heap: metric(text, 'nodejs_heap_size_used_bytes'),
    old: metric(text, 'nodejs_heap_space_size_used_bytes', 'space="old"'),
  };
}

/** The request mix, cycled by a counter: 10 slots of 100 are bad input, 30 sign, 50 price, 10 more bad. */
function requestMix(gatewayUrl: string, apiKey: string, chains: ChainInfo[]) {
  const json = { 'content-type': 'application/json', 'x-api-key': apiKey };
  const sign = (c: ChainInfo, i: number, extra: Record<string, unknown> = {}) =>
    JSON.stringify({
      chainId: c.chainId,
      tokenIn: c.quoteToken.address,
      tokenOut: c.baseTokens[i % c.baseTokens.length]!.address,
      fee: String(10 + (i % 20)),
      userAddress: c.testUser.address,
      amountIn: String(10n ** BigInt(c.quoteToken.decimals) * BigInt(1 + (i % 50))),
      ...extra,
    });
  const c0 = chains[0]!;
  const gzipGarbage = Buffer.from('this is not gzip');
  const bad: ((i: number) => autocannon.Request)[] = [
    () => ({ method: 'GET', path: '/v2/price?chainid=56', headers: { 'x-api-key': apiKey } }),
    () => ({ method: 'POST', path: '/v2/swap/sign', headers: json, body: '{"tokenIn":' }),
    (i) => ({ method: 'POST', path: '/v2/swap/sign', headers: json, body: sign(c0, i).replace('{', '{"fee":"1",') }),
    () => ({
      method: 'POST',
      path: '/v2/swap/sign',
      headers: { ...json, 'content-encoding': 'gzip' },
      body: gzipGarbage as unknown as string,
    }),
    (i) => ({ method: 'POST', path: '/v2/swap/sign', headers: json, body: sign(c0, i, { extra: 1 }) }),
    (i) => ({ method: 'POST', path: '/v2/swap/sign', headers: json, body: sign(c0, i, { fee: '-1' }) }),
    // A fresh random key each time: the key cache must stay bounded.
    () => ({ method: 'GET', path: '/v2/price', headers: { 'x-api-key': `pmm_${randomBytes(12).toString('hex')}` } }),
    () => ({ method: 'GET', path: `/v2/nothing-${randomBytes(4).toString('hex')}`, headers: { 'x-api-key': apiKey } }),
    () => ({ method: 'POST', path: '/v2/swap/sign', headers: json, body: `{"fee":"${'9'.repeat(20_000)}"}` }),
    () => ({ method: 'GET', path: '/v2/price?chainId=abc', headers: { 'x-api-key': apiKey } }),
  ];
  let n = 0;
  return (): autocannon.Request => {
    const i = n++;
    const slot = i % 100;
    const chain = chains[i % chains.length]!;
    if (slot < 10 || slot >= 90) return bad[i % bad.length]!(i);
    if (slot < 40) return { method: 'POST', path: '/v2/swap/sign', headers: json, body: sign(chain, i) };
    return { method: 'GET', path: `/v2/price?chainId=${chain.chainId}`, headers: { 'x-api-key': apiKey } };
  };
}

function slope(points: [number, number][]): number {
  const n = points.length;
  const mx = points.reduce((s, [x]) => s + x, 0) / n;
  const my = points.reduce((s, [, y]) => s + y, 0) / n;
  const num = points.reduce((s, [x, y]) => s + (x - mx) * (y - my), 0);
  const den = points.reduce((s, [x]) => s + (x - mx) ** 2, 0);
  return den === 0 ? 0 : num / den;
}

/** The stack as the README starts it, on free ports, with the soak's key and a limit nothing reaches. */
async function startSoakStack(): Promise<{
  child: ChildProcess;
  gatewayUrl: string;
  apiKey: string;
  gatewayMetrics: string;
  signerMetrics: string;
  chains: ChainInfo[];
}> {
  const [gatewayPort, signerPort, opsPort] = [await freePort(), await freePort(), await freePort()];
  const apiKey = `pmm_soak_${randomBytes(16).toString('hex')}`;
  const started = await startStack({
    env: {
      GATEWAY_PORT: String(gatewayPort),
      SIGNER_PORT: String(signerPort),
      OPS_PORT: String(opsPort),
      DEV_API_KEY: apiKey,
      // The dev integrator uses the default limit: high enough that nothing is 429. The mix's
      // wrong keys all come from this one address: no failed-authentication limit either.
      DEFAULT_RATE_LIMIT: '1000000000',
      AUTH_FAILURE_LIMIT: '0',
      // Three tenths of a million are signs, about 100,000 a chain: the default daily quota of
      // signatures (DAILY_SIGNATURE_QUOTA, 100,000 per integrator and chain) would refuse the last ones.
      DAILY_SIGNATURE_QUOTA: '0',
      LOG_LEVEL: 'error',
    },
  });
  const stack = JSON.parse(readFileSync(started.stackFile, 'utf8')) as { chains: Record<string, ChainInfo> };
  return {
    child: started.process,
    gatewayUrl: `http://127.0.0.1:${gatewayPort}`,
    apiKey,
    gatewayMetrics: `http://127.0.0.1:${opsPort}/metrics`,
    signerMetrics: `http://127.0.0.1:${signerPort}/metrics`,
    chains: Object.values(stack.chains),
  };
}

async function main(): Promise<void> {
  console.log(`soak: starting the local stack (scripts/start.mjs, free ports)`);
  const stack = await startSoakStack();
  const stop = () =>
    new Promise<void>((resolve) => {
      if (stack.child.exitCode !== null) return resolve();
      stack.child.once('exit', () => resolve());
      stack.child.kill('SIGTERM');
    });
  // Interrupted: stop the stack (start.mjs stops everything it started), then exit.
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      void stop().then(() => process.exit(130));
    });
  }
  try {
    const next = requestMix(stack.gatewayUrl, stack.apiKey, stack.chains);
    const sample = async (requests: number): Promise<Sample> => ({
      requests,
      gateway: await memory(stack.gatewayMetrics),
      signer: await memory(stack.signerMetrics),
    });
    const mb = (n: number) => (n / MB).toFixed(1).padStart(6);
    const show = (s: Sample, note = '') =>
      console.log(
        `${String(s.requests).padStart(9)}  gateway rss ${mb(s.gateway.rss)} heap ${mb(s.gateway.heap)} old ${mb(s.gateway.old)}   signer rss ${mb(s.signer.rss)} heap ${mb(s.signer.heap)} old ${mb(s.signer.old)} (MB)${note}`,
      );
    const samples: Sample[] = [await sample(0)];
    console.log(`soak: ${TOTAL} requests, ${CONNECTIONS} connections, memory every ${STEP}`);
    show(samples[0]!, '  (start, before load)');
    const statuses = new Map<string, number>();
    let errors = 0;
    const started = Date.now();
    for (let done = 0; done < TOTAL;) {
      const amount = Math.min(STEP, TOTAL - done);
      const r = await autocannon({
        url: stack.gatewayUrl,
        connections: CONNECTIONS,
        amount,
        requests: [{ setupRequest: () => next() }],
      });
      done += amount;
      errors += r.errors + r.timeouts;
      const stats = (r as unknown as { statusCodeStats?: Record<string, { count: number }> }).statusCodeStats ?? {};
      for (const [code, { count }] of Object.entries(stats)) statuses.set(code, (statuses.get(code) ?? 0) + count);
      const s = await sample(done);
      samples.push(s);
      show(s, `  ${Math.round(r.requests.average)} req/s`);
    }
    const seconds = (Date.now() - started) / 1000;
    await new Promise((r) => setTimeout(r, IDLE_MS));
    const idle = await sample(TOTAL);
    show(idle, `  (after ${IDLE_MS / 1000} s idle)`);

    console.log(
      `\n${TOTAL} requests in ${seconds.toFixed(0)} s (${(TOTAL / seconds).toFixed(0)} req/s); statuses ${JSON.stringify(Object.fromEntries([...statuses].sort()))}; connection errors/timeouts ${errors}`,
    );
    const fivexx = [...statuses].filter(([c]) => c.startsWith('5')).reduce((s, [, n]) => s + n, 0);
    console.log(`5xx answers: ${fivexx}`);
    console.log(
      `\n${'service'.padEnd(8)} ${'figure'.padEnd(5)} ${'start'.padStart(8)} ${'peak'.padStart(8)} ${'end'.padStart(8)} ${'idle'.padStart(8)}  slope after ${WARM_UP / 1000}k (MB per 100k)`,
    );
    for (const svc of ['gateway', 'signer'] as const) {
      for (const fig of ['rss', 'heap', 'old'] as const) {
        const values = samples.map((s) => s[svc][fig] / MB);
        const after = samples
          .filter((s) => s.requests >= WARM_UP)
          .map((s): [number, number] => [s.requests / STEP, s[svc][fig] / MB]);
        console.log(
          `${svc.padEnd(8)} ${fig.padEnd(5)} ${values[0]!.toFixed(1).padStart(8)} ${Math.max(...values)
            .toFixed(1)
            .padStart(
              8,
            )} ${values[values.length - 1]!.toFixed(1).padStart(8)} ${(idle[svc][fig] / MB).toFixed(1).padStart(8)}  ${slope(after).toFixed(2).padStart(8)}`,
        );
      }
    }
  } finally {
    await stop(); // the stack's temp dir goes with it (startStack)
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
