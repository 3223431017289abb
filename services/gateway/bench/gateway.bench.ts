/**
 * `npm run bench gateway`: what an integrator feels and what an operator pays, side by side in
 * one run with bare node:http twins answering the same bytes (this machine's jitter is large:
 * only the ratios within one run mean much).
 *
 * The system under test is the one `npm start` runs: the gateway and the signer as processes
 * from their builds, with the stack's settings (testkit's startSystem), on `npm run bench`'s
 * Redis (REDIS_URL: the append-only file fsynced as shipped; the signer's REDIS_DURABILITY is
 * npm start's, auto, unless REDIS_DURABILITY says otherwise) under a random key prefix: one
 * server for both Redis roles, where `npm start` runs two (the records apart; `npm run bench
 * redis-roles` compares one and two, and found no latency a client feels between them). No
 * indexer: the book and the registries are seeded; one devnet chain, mining only on a
 * transaction (none is sent), is what the signer checks its quote validity against at start.
 * The bare twins run in a process of their own (a child of this file), as does the in-process
 * composition. Every server's CPU is read from /proc/<pid>/stat (user + system, all its
 * threads) before and after each case. Rows:
 * 1. one keep-alive client, one request at a time (open-loop.ts closedLoop): sign (without
 *    amountIn), sign with amountIn (`signFirm`: the signer's firm quote, one eth_call of the
 *    router's quote() at the book's block), that eth_call sent straight to the node
 *    (`nodeQuote`: the node's round trip) and price, p50/p99 against the bare POST and GET twins;
 * 2. an open loop at an evenly paced 100 (signFirm too) and 500 requests/s over 10 keep-alive sockets
 *    (open-loop.ts openLoop): p50/p99 from when each request was due, and the servers' CPU per
 *    request (gateway + signer; the bare twin's own);
 * 3. saturation, autocannon with 50 connections: throughput as a share of the twin's (a floor);
 * 4. for the record, not shipped: the gateway's steps and the signer's use case in ONE process,
 *    no hop (in-process.ts), at the same paced rate and one client;
 * 5. the cost floor of a signed quote (sign-floor.ts), with the HTTP hop measured by a bare
 *    forwarder (bare POST → one keep-alive HTTP hop → bare POST); and the shape's floor
 *    (`bareHopWrite`): that hop to a bare POST in a second process which answers once one write
 *    to the main Redis is answered (after its fsync), so a gateway, a signer and one durable
 *    write doing nothing else, beside the sign in every load (`bareWrite`: the write alone);
 * 6. the sign through every durability mode, side by side in the same loads (one-client, paced
 *    500/s, saturated): `sign` is the main system's (fsync, as `npm start` runs it on `npm run
 *    bench`'s Redis), `signNone` and `signReplica` each through a gateway and a signer of their
 *    own on a Redis of their own (durability-modes.ts: a once-a-second fsync confirming nothing;
 *    a primary and a replica, WAIT), with one fsync of this disk measured alone; and at a paced
 *    100/s each mode again (and one client in fsync mode) for an integrator whose rate limit is
 *    exact (`…Limited`: up to 1,000 per window, the default 600 a minute too, the gateway
 *    reserves each request in Redis, a write that waits for an fsync; one request ahead, off
 *    the sign's path, for limits from 100 a window);
 * 7. for the capacity plan: requests per second per core of each process (the inverse of its
 *    CPU per request), Redis's CPU per request (INFO; exact on `npm run bench`'s private
 *    Redis), and what the audit trail holds per signature (redis-footprint.ts): memory in the
 *    stream and its index, the append-only file's growth, and both per day at 100 and 1,000
 *    signatures/s;
 * 8. past capacity (overload-rows.ts): firm quotes, each a different amount, evenly paced at
 *    500/s, at the knee (closed loop) and at twice the knee, on the main system (npm start's
 *    shape) and on the replica mode's, side by side; `BENCH_GATEWAY_ONLY=overload` runs these
 *    rows alone (both systems, the shipped sign deadlines);
 * 9. references on and off (reference-rows.ts): price, sign and sign with amountIn for one client,
 *    and sign paced at 500/s with its CPU, on a system whose signer reads each pair's standing and
 *    one whose chains file names no feed, side by side; `BENCH_GATEWAY_ONLY=references` runs
 *    these rows alone.
 * The systems and how they are seeded: bench-systems.ts.
 * BENCH_PROFILE=1 profiles every server process for the whole run (cpu-profile-hook.cjs; every
 * figure of that run is slower) and adds where each one's CPU goes per request in each row
 * (profile-breakdown.ts); BENCH_CPU_PROF=<dir> keeps the servers' V8 CPU profiles there.
 * BENCH_SECONDS (default 5) is the length of each row; before the rows each system's sign runs
 * saturated for BENCH_WARM_SECONDS (default 5), unmeasured, so the JIT has settled.
 *
 * Goals (benchmarks, not tests): sign p50 one client ≤ 4× bare (+ one fsync in fsync mode); sign
 * p99 paced 500/s ≤ 5× bare (+ one fsync); replica mode ≥ 2,000 signs/s saturated and a p99 ≤
 * 50 ms at a paced 500/s with every sign answered;
 * gateway + signer CPU per sign at 500/s ≤ 700 µs; saturated sign ≥ 12 % of bare; saturated
 * price ≥ 40 % of bare; sign with amountIn p50 within one node round trip + 1 ms of sign's;
 * sign with amountIn p99 at 100/s ≤ 100 ms; firm quotes paced 500/s ≥ 99 % answered 200 with
 * p99 ≤ 100 ms, and at twice the knee p99 ≤ the sign's deadline with 200s per second ≥ 90 % of
 * the knee's.
 *
 * What each part does lives in its own file: the systems (bench-systems.ts), the bare twins
 * (bare-twins.ts), the loads (open-loop.ts), past capacity (overload-rows.ts), the floor
 * (sign-floor.ts), the profiles (profile-breakdown.ts), the Redis footprint (redis-footprint.ts).
 * main() below stays one function on purpose: it is the report, in the order it prints, each
 * block one table over the systems started at its top, and the ratios it prints need the rows of
 * one run side by side (this machine's jitter makes rows of separate runs incomparable).
 */
import type { Profiler } from 'node:inspector';
import { randomUUID } from 'node:crypto';
import { readFileSync, readdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import autocannon from 'autocannon';
import { createDigestSigner, createRedis, redisReady, type RedisClient } from '@pmm/core';
import { GATEWAY_SETTINGS } from '@pmm/gateway';
import { processCpuSeconds } from '@pmm/testkit';
import { devnetKey, type ChainStack } from '@pmm/devnet';
import { quoteCalldataBuilder, signAmmVerification } from '@pmm/protocol';
import { closedLoop, openLoop, type LatencyFigures, type LoadRequest } from './open-loop';
import { profileBreakdown, profileWindow, type StepCost } from './profile-breakdown';
import { aofMark, auditFootprint, bytesPerDay, redisCpuSeconds, signatureIndexEntryBytes } from './redis-footprint';
import { measureSignFloor } from './sign-floor';
import { fsyncLatencyMs } from './durability-modes';
import {
  firmTarget,
  mainSystemOthers,
  modeSystemOthers,
  overloadOnly,
  overloadRows,
  printOverloadRows,
} from './overload-rows';
import { referenceRows, referencesOnly } from './reference-rows';
import {
  PROFILE,
  PROFILE_DIR,
  seed,
  signBody,
  startMainSystem,
  startModeSystem,
  stopEverything,
} from './bench-systems';
import { hasInProcess, startChild, stopChild, stopChildren } from './bare-twins';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
/** How long each system's sign path runs saturated before the rows (the JIT's warm-up). */
const WARM_SECONDS = Number(process.env.BENCH_WARM_SECONDS ?? 5);
const CONNECTIONS = 50;
/** The firm path's warm-up before the rows past capacity (the sign path's ran before every row). */
const FIRM_WARM_SECONDS = 2;
const SIGN_PATH = '/v2/swap/sign';
const PRICE_PATH = '/v2/price?chainId=8453';

/** The node's own round trip of a firm quote: the signer's eth_call of quote(), sent straight to the node. */
function nodeQuoteBody(chain: ChainStack, head: { hash: string; timestamp: number }, amountIn: bigint): string {
  const timestampInMilisec = BigInt(head.timestamp) * 1000n;
  const [tokenIn, tokenOut] = [chain.quoteToken.address, chain.baseTokens[0]!.address];
  const signature = signAmmVerification(createDigestSigner(devnetKey('quoter', 8453).privateKey), {
    chainId: 8453,
    verifier: chain.contracts.verifier,
    tokenIn,
    tokenOut,
    timestampInMilisec,
  });
  const data = quoteCalldataBuilder({ tokenIn, tokenOut, timestampInMilisec, signature })(amountIn);
  return JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'eth_call',
    params: [
      { to: chain.contracts.router, data },
      { blockHash: head.hash, requireCanonical: true },
    ],
  });
}

// ---------------------------------------------------------------- parent: load and report
interface Row {
  name: string;
  latency: LatencyFigures;
  /** Server CPU µs per request, summed over the processes serving the case. */
  cpuUs: number;
  /** The same, per process, in the order they were given. */
  cpuUsEach: number[];
  /**
   * Redis's CPU µs per request over the case (every client's work, the bench's own included;
   * every node's: the replica's too).
   */
  redisUs: number;
  /** The processes serving the case, and when it ran (monotonic µs), for BENCH_PROFILE=1. */
  servers: number[];
  window: [number, number];
}

const monotonicUs = () => Number(process.hrtime.bigint() / 1000n);

/**
 * Runs `drive` and charges the CPU time of the server processes `servers` (pids) and of Redis
 * to the requests it answered.
 */
async function measure(
  name: string,
  servers: number[],
  redis: RedisClient[],
  drive: () => Promise<LatencyFigures>,
): Promise<Row> {
  const redisCpu = async () => (await Promise.all(redis.map(redisCpuSeconds))).reduce((a, b) => a + b, 0);
  const before = servers.map(processCpuSeconds);
  const redisBefore = await redisCpu();
  const from = monotonicUs();
  const latency = await drive();
  const to = monotonicUs();
  const redisAfter = await redisCpu();
  const after = servers.map(processCpuSeconds);
  const total = latency.count || 1;
  const cpuUsEach = after.map((cpu, i) => ((cpu - before[i]!) * 1e6) / total);
  if (latency.failures > 0) console.log(`  (${name}: ${latency.failures} answers not 2xx)`);
  return {
    name,
    latency,
    cpuUs: cpuUsEach.reduce((a, b) => a + b, 0),
    cpuUsEach,
    redisUs: ((redisAfter - redisBefore) * 1e6) / total,
    servers,
    window: [from, to],
  };
}

/** BENCH_PROFILE=1: CPU µs per request by step, per serving process, from the profiles written on exit. */
function breakdownOf(row: Row): StepCost[][] {
  return row.servers.map((pid) => {
    const file = readdirSync(PROFILE_DIR!).find((f) => f.endsWith(`-${pid}.cpuprofile`));
    if (!file) throw new Error(`no CPU profile of process ${pid} in ${PROFILE_DIR}`);
    const profile = JSON.parse(readFileSync(path.join(PROFILE_DIR!, file), 'utf8')) as Profiler.Profile;
    return profileBreakdown(profileWindow(profile, ...row.window), row.latency.count);
  });
}

/** autocannon at saturation, in the same figures as the other loads. */
async function saturate(request: LoadRequest, seconds = SECONDS): Promise<LatencyFigures> {
  const r = await autocannon({
    url: request.url,
    method: request.method,
    headers: request.headers,
    body: request.body,
    connections: CONNECTIONS,
    duration: seconds,
  });
  return {
    count: r.requests.total,
    failures: r.non2xx + r.errors + r.timeouts,
    p50: r.latency.p50,
    p99: r.latency.p99,
    max: r.latency.max,
    rate: r.requests.average,
  };
}

const col = (s: string, width: number) => s.padStart(width);
const ms = (v: number) => (v < 10 ? v.toFixed(2) : v.toFixed(1));

async function main(): Promise<void> {
  const prefix = `bench-${randomUUID().slice(0, 8)}`;
  if (process.env.BENCH_GATEWAY_ONLY === 'overload') return overloadOnly(REDIS_URL, prefix, SECONDS, WARM_SECONDS);
  if (process.env.BENCH_GATEWAY_ONLY === 'references') return referencesOnly(REDIS_URL, prefix, SECONDS);
  const redis: RedisClient = createRedis(REDIS_URL, { name: 'bench-setup' });
  await redisReady(redis);
  const benchKeys = await seed(redis, prefix);
  const { apiKey } = benchKeys;

  // The other durability modes' systems start meanwhile (each has its own devnet and Redis).
  const modesStarting = Promise.all([startModeSystem('none', prefix), startModeSystem('replica', prefix)]);
  modesStarting.catch(() => undefined);
  // As `npm start` runs them, on this Redis under this run's prefix (the header says what differs).
  const { sys, head } = await startMainSystem(redis, REDIS_URL, prefix);
  const [none, replica] = await modesStarting;
  const pidOf = (service: 'gateway' | 'signer') => sys.processesOf(service)[0]!.child.pid!;
  const chain = sys.chain(8453);
  // Inside the first ask tier of every devnet chain.
  const FIRM_AMOUNT_IN = 1_000n * 10n ** BigInt(chain.quoteToken.decimals);
  const SIGN_BODY = signBody(chain);
  // The bare POST twin answers the bytes of a signed quote: one asked of the signer directly,
  // with the headers the gateway sends.
  const signed = await fetch(`${sys.signer.url}${SIGN_PATH}`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-internal-token': sys.signer.internalToken,
      'x-integrator-id': 'bench',
    },
    body: SIGN_BODY,
  });
  if (signed.status !== 200) throw new Error(`bench sign request: ${signed.status} ${await signed.text()}`);
  const signedBytes = Buffer.from(await signed.arrayBuffer());
  const bareWrite = await startChild(['serve-bare-write', prefix, signedBytes.toString('base64')]);
  const bare = await startChild([
    'serve-bare',
    prefix,
    signedBytes.toString('base64'),
    String(bareWrite.ports.bareWrite),
  ]);
  const inProcess = hasInProcess() ? await startChild(['serve-inprocess', prefix]) : undefined;
  const gatewayPort = Number(new URL(sys.gateway.url).port);
  const pair = [pidOf('gateway'), pidOf('signer')];
  const at = (port: number | undefined, route: string) => `http://127.0.0.1:${port!}${route}`;
  const headers = { 'x-api-key': apiKey };
  const post = (port: number | undefined, key = apiKey): LoadRequest => ({
    url: at(port, SIGN_PATH),
    method: 'POST',
    headers: { 'x-api-key': key, 'content-type': 'application/json' },
    body: SIGN_BODY,
  });
  const get = (port: number | undefined): LoadRequest => ({ url: at(port, PRICE_PATH), method: 'GET', headers });
  const bp = bare.ports;
  const barePid = bare.child.pid!;
  // Each case's CPU is charged to its servers and to the Redis it uses (the main one unless it says).
  const cases: Record<string, { request: LoadRequest; servers: number[]; redis?: RedisClient[] }> = {
    barePost: { request: post(bp.barePost), servers: [barePid] },
    sign: { request: post(gatewayPort), servers: pair },
    // The same sign through the other modes' gateway and signer (durability-modes.ts).
    signNone: { request: post(none.port, none.keys.apiKey), servers: none.pair, redis: none.redis.nodes },
    signReplica: {
      request: post(replica.port, replica.keys.apiKey),
      servers: replica.pair,
      redis: replica.redis.nodes,
    },
    // The same three with the exact rate limit: a Redis write (the reservation) before the signer's.
    signLimited: { request: post(gatewayPort, benchKeys.limitedKey), servers: pair },
    signNoneLimited: {
      request: post(none.port, none.keys.limitedKey),
      servers: none.pair,
      redis: none.redis.nodes,
    },
    signReplicaLimited: {
      request: post(replica.port, replica.keys.limitedKey),
      servers: replica.pair,
      redis: replica.redis.nodes,
    },
    bareGet: { request: get(bp.bareGet), servers: [barePid] },
    price: { request: get(gatewayPort), servers: [pair[0]!] },
    bareHop: { request: post(bp.bareHop), servers: [barePid] },
    // The shape's floor (serveBareWrite): a bare hop, then one durable write, in two processes as the sign's.
    bareWrite: { request: post(bareWrite.ports.bareWrite), servers: [bareWrite.child.pid!] },
    bareHopWrite: { request: post(bp.bareHopWrite), servers: [barePid, bareWrite.child.pid!] },
    signFirm: { request: { ...post(gatewayPort), body: signBody(chain, FIRM_AMOUNT_IN) }, servers: pair },
    // The node's CPU is not the service's: no server charged.
    nodeQuote: {
      request: {
        url: chain.rpcUrl,
        method: 'POST' as const,
        headers: { 'content-type': 'application/json' },
        body: nodeQuoteBody(chain, head, FIRM_AMOUNT_IN),
      },
      servers: [] as number[],
    },
    ...(inProcess ? { inProcess: { request: post(inProcess.ports.inProcess), servers: [inProcess.child.pid!] } } : {}),
  };
  type CaseName = keyof typeof cases;
  const caseOf = (n: CaseName) => cases[n]!;
  const fsync = fsyncLatencyMs();

  // The append-only file's size before the first signature (the warm-up signs too).
  const aofBefore = await aofMark(redis);
  // Warm-up (JIT, keep-alive sockets, caches): not measured. Each system's sign path first runs
  // saturated for WARM_SECONDS: after 1 s at 500/s alone (what this was), the next one-client
  // rows of the same processes measured 1.5–2× their figures of a few rows later, as V8 was still
  // optimising the path; an integrator's steady traffic meets the optimised one.
  for (const name of ['sign', 'signNone', 'signReplica', 'inProcess'] as CaseName[])
    if (cases[name]) await saturate(caseOf(name).request, WARM_SECONDS);
  for (const c of Object.values(cases)) await openLoop(c.request, 500, 1);

  const rows = new Map<string, Row>();
  const run = async (label: string, names: CaseName[], drive: (r: LoadRequest) => Promise<LatencyFigures>) => {
    for (const n of names)
      rows.set(
        `${label} ${n}`,
        await measure(`${label} ${n}`, caseOf(n).servers, caseOf(n).redis ?? [redis], () => drive(caseOf(n).request)),
      );
  };
  const withInProcess = (names: CaseName[]): CaseName[] => (inProcess ? [...names, 'inProcess'] : names);
  await run(
    'one-client',
    withInProcess([
      'barePost',
      'sign',
      'signLimited',
      'signNone',
      'signReplica',
      'signFirm',
      'nodeQuote',
      'bareHop',
      'bareWrite',
      'bareHopWrite',
      'bareGet',
      'price',
    ]),
    (r) => closedLoop(r, SECONDS),
  );
  await run(
    'paced-100',
    [
      'barePost',
      'sign',
      'signNone',
      'signReplica',
      'signLimited',
      'signNoneLimited',
      'signReplicaLimited',
      'signFirm',
      'bareHop',
      'bareHopWrite',
    ],
    (r) => openLoop(r, 100, SECONDS),
  );
  await run(
    'paced-500',
    withInProcess([
      'barePost',
      'sign',
      'signNone',
      'signReplica',
      'bareHop',
      'bareWrite',
      'bareHopWrite',
      'bareGet',
      'price',
    ]),
    (r) => openLoop(r, 500, SECONDS),
  );
  await run(
    'saturated',
    withInProcess(['barePost', 'sign', 'signNone', 'signReplica', 'bareGet', 'price', 'bareHop', 'bareHopWrite']),
    saturate,
  );

  // Past capacity, on npm start's shape and on the replicated one (overload-rows.ts).
  const overload = [
    ...(await overloadRows(
      firmTarget({
        name: 'fsync',
        port: gatewayPort,
        apiKey,
        chain,
        metricsUrls: [`${sys.gateway.opsUrl}/metrics`, sys.processesOf('signer')[0]!.metricsUrl!],
        pair,
        others: await mainSystemOthers(chain, redis),
      }),
      SECONDS,
      FIRM_WARM_SECONDS,
    )),
    ...(await overloadRows(
      firmTarget({ name: 'replica', ...replica, apiKey: replica.keys.apiKey, others: await modeSystemOthers(replica) }),
      SECONDS,
      FIRM_WARM_SECONDS,
    )),
  ];

  // Stopped (SIGTERM: each drains and exits, a profiled one writing its profile) before the footprint.
  await Promise.all([
    stopEverything(),
    ...[bare, bareWrite, inProcess].filter((c) => c !== undefined).map((c) => stopChild(c.child)),
  ]);
  // Before the floor below, which writes sample records of its own to the same trail.
  const audit = await auditFootprint(redis, prefix, 8453, aofBefore);

  const row = (key: string) => rows.get(key)!;
  console.log(
    `\n${SECONDS} s per row; latency in ms; CPU = the serving processes' CPU µs per request (/proc/<pid>/stat)` +
      (PROFILE_DIR ? '; every server profiled (slower than an unprofiled run)' : ''),
  );
  console.log(
    'load / case'.padEnd(34),
    col('req/s', 8),
    col('p50', 7),
    col('p99', 7),
    col('max', 7),
    col('CPU µs', 8),
    col('Redis µs', 9),
    col('p50×twin', 9),
    col('p99×twin', 9),
    col('rate÷twin', 10),
  );
  const twinKey = (key: string) => {
    const [load, n] = key.split(' ');
    return `${load} ${n === 'price' || n === 'bareGet' ? 'bareGet' : 'barePost'}`;
  };
  for (const [key, r] of rows) {
    const twin = row(twinKey(key));
    const l = r.latency;
    console.log(
      key.padEnd(34),
      col(l.rate.toFixed(0), 8),
      col(ms(l.p50), 7),
      col(ms(l.p99), 7),
      col(ms(l.max), 7),
      col(r.cpuUs.toFixed(0), 8),
      col(r.redisUs.toFixed(0), 9),
      col(`${(l.p50 / twin.latency.p50).toFixed(2)}×`, 9),
      col(`${(l.p99 / twin.latency.p99).toFixed(2)}×`, 9),
      col(`${((100 * l.rate) / twin.latency.rate).toFixed(1)}%`, 10),
    );
  }
  for (const load of ['paced-100', 'paced-500', 'saturated']) {
    const sign = row(`${load} sign`);
    console.log(
      `${load}: sign CPU µs/request by process: gateway ${sign.cpuUsEach[0]!.toFixed(0)}, signer ${sign.cpuUsEach[1]!.toFixed(0)}`,
    );
  }

  // The durability modes side by side: the same sign, each through its own gateway and signer.
  const modes = [
    { mode: 'none', key: 'signNone', describe: none.redis.describe },
    {
      mode: 'fsync',
      key: 'sign',
      describe: `the main system: npm run bench's Redis (appendfsync always, unless REDIS_URL named another); REDIS_DURABILITY=${process.env.REDIS_DURABILITY ?? 'auto'}`,
    },
    { mode: 'replica', key: 'signReplica', describe: replica.redis.describe },
  ];
  console.log(
    `\ndurability modes side by side (ms, and × the bare POST twin of the same load; "exact limit": ` +
      `the integrator's rate limit reserved in Redis for each request, one ahead; one fsync of this disk alone: ` +
      `p50 ${ms(fsync.p50)} ms, p99 ${ms(fsync.p99)} ms):`,
  );
  console.log(
    '  mode'.padEnd(10),
    col('1-client p50', 14),
    col('100/s p50', 11),
    col('exact limit', 12),
    col('500/s p50', 11),
    col('500/s p99', 12),
    col('unanswered', 11),
    col('saturated/s', 12),
    col('CPU µs@500', 11),
    col('Redis µs@500', 13),
  );
  // A twin whose figure rounds to 0 (autocannon's whole milliseconds) has no ratio.
  const times = (r: Row, q: 'p50' | 'p99') => {
    const twin = row(twinKey(r.name)).latency[q];
    return twin > 0 ? `${(r.latency[q] / twin).toFixed(1)}×` : '';
  };
  const cell = (r: Row, q: 'p50' | 'p99') => `${ms(r.latency[q])} ${times(r, q)}`;
  for (const m of modes) {
    const [one, slow, limited, paced, sat] = [
      `one-client ${m.key}`,
      `paced-100 ${m.key}`,
      `paced-100 ${m.key}Limited`,
      `paced-500 ${m.key}`,
      `saturated ${m.key}`,
    ].map(row);
    console.log(
      `  ${m.mode}`.padEnd(10),
      col(cell(one!, 'p50'), 14),
      col(cell(slow!, 'p50'), 11),
      col(cell(limited!, 'p50'), 12),
      col(cell(paced!, 'p50'), 11),
      col(cell(paced!, 'p99'), 12),
      col(String(Math.round(500 * SECONDS) - paced!.latency.count + paced!.latency.failures), 11),
      col(
        `${sat!.latency.rate.toFixed(0)} ${((100 * sat!.latency.rate) / row('saturated barePost').latency.rate).toFixed(1)}%`,
        12,
      ),
      col(paced!.cpuUs.toFixed(0), 11),
      col(paced!.redisUs.toFixed(0), 13),
      ` ${m.describe}`,
    );
  }

  // Capacity: a process's requests per second on one core is the inverse of its CPU per request.
  const perCore = (us: number) => (us > 0 ? Math.round(1e6 / us).toLocaleString('en-US') : 'n/a');
  console.log('\nper core (1 / CPU per request; Redis: its one thread):');
  for (const load of ['paced-500', 'saturated']) {
    const sign = row(`${load} sign`);
    const price = row(`${load} price`);
    console.log(
      `  ${load}: signs/s per core: gateway ${perCore(sign.cpuUsEach[0]!)}, signer ${perCore(sign.cpuUsEach[1]!)}, ` +
        `both ${perCore(sign.cpuUs)}, Redis ${perCore(sign.redisUs)}; price answers/s per core: gateway ${perCore(price.cpuUs)} ` +
        `(bare twin ${perCore(row(`${load} bareGet`).cpuUs)}), Redis ${perCore(price.redisUs)}`,
    );
  }
  // BENCH_PROFILE=1: where each row's CPU goes, per process.
  if (PROFILE) {
    for (const r of rows.values()) {
      breakdownOf(r).forEach((steps, i) => {
        const who = / sign(None|Replica)?(Limited)?$/.test(r.name) ? ['gateway', 'signer'][i] : 'server';
        console.log(`\n${r.name}: CPU µs per request in the ${who} process, by step:`);
        for (const s of steps) if (s.us >= 0.5) console.log(`  ${s.name.padEnd(48)} ${col(s.us.toFixed(1), 7)}`);
      });
    }
    // Kept only where BENCH_CPU_PROF asked for them.
    if (!process.env.BENCH_CPU_PROF) rmSync(PROFILE_DIR!, { recursive: true, force: true });
  }

  // The floor: what a signed quote costs at the least, step by step (saturated rows: CPU per
  // request is lowest there, where each wake-up serves several requests).
  const barePost = row('saturated barePost');
  // The signature, the digest and the record's client side: what a signed quote adds to any hop.
  const signingSteps = await measureSignFloor(REDIS_URL, prefix);
  const steps = [
    { name: 'bare node:http POST answer (saturated row)', cpuUs: barePost.cpuUs },
    {
      name: 'one keep-alive HTTP hop (bareHop − barePost, saturated)',
      cpuUs: row('saturated bareHop').cpuUs - barePost.cpuUs,
    },
    ...signingSteps,
  ];
  const floor = steps.reduce((a, s) => a + s.cpuUs, 0);
  console.log('\ncost floor of one signed quote through gateway and signer (CPU µs):');
  for (const s of steps) console.log(`  ${s.name.padEnd(58)} ${col(s.cpuUs.toFixed(1), 7)}`);
  console.log(`  ${'floor'.padEnd(58)} ${col(floor.toFixed(1), 7)}`);

  const kb = (b: number) => (b / 1024).toFixed(2);
  const gb = (b: number) => (b / 2 ** 30).toFixed(1);
  // The floor wrote 21,000 records with distinct signatures to the same index.
  const indexBytes = await signatureIndexEntryBytes(redis, prefix, 8453);
  const memory = audit.streamBytes + indexBytes;
  console.log(
    `\naudit trail after ${audit.records.toLocaleString('en-US')} signatures: Redis memory per signature ` +
      `${audit.streamBytes.toFixed(0)} B in the stream + ${indexBytes.toFixed(0)} B in the signature index (a distinct signature) = ${memory.toFixed(0)} B; ` +
      `append-only file growth per signature ${Number.isNaN(audit.aofBytes) ? 'n/a (AOF off or rewritten)' : `${audit.aofBytes.toFixed(0)} B`}`,
  );
  for (const rate of [100, 1_000])
    console.log(
      `  at ${rate.toLocaleString('en-US')} signatures/s: memory ${gb(bytesPerDay(memory, rate))} GiB/day` +
        (Number.isNaN(audit.aofBytes) ? '' : `, append-only file ${gb(bytesPerDay(audit.aofBytes, rate))} GiB/day`) +
        ` (${kb(memory)} KiB × ${rate} × 86,400 s)`,
    );

  // The shape's floor (bareHopWrite: a hop and one durable write, nothing else) beside the sign:
  // a goal below the floor is out of reach of any implementation of this shape on this machine.
  const floorOf = (load: string) => row(`${load} bareHopWrite`);
  console.log(
    `\nsign (fsync) beside the shape's floor (bareHopWrite: bare POST → bare hop → bare POST awaiting one write to the same Redis, in two processes):`,
  );
  for (const load of ['one-client', 'paced-500']) {
    const [sign, floorRow] = [row(`${load} sign`), floorOf(load)];
    console.log(
      `  ${load.padEnd(11)} p50 ${ms(sign.latency.p50)} ms, floor ${ms(floorRow.latency.p50)} ms (${(sign.latency.p50 / floorRow.latency.p50).toFixed(2)}×); ` +
        `CPU ${sign.cpuUs.toFixed(0)} µs, floor ${floorRow.cpuUs.toFixed(0)} µs (${(sign.cpuUs / floorRow.cpuUs).toFixed(2)}×)`,
    );
  }
  /** What no implementation of the shape goes below, beside a goal line: `value`, named `what`. */
  interface Floor {
    what: string;
    value: number;
  }
  const floorNote = (floor: Floor, limit: number, atMost: boolean, unit: string) =>
    (atMost ? floor.value <= limit : floor.value >= limit)
      ? ''
      : `; ${floor.what}: ${floor.value.toFixed(unit === '%' ? 1 : 2)}${unit}, ${atMost ? 'above' : 'below'} the goal too`;
  const goal = (text: string, value: number, limit: number, atMost: boolean, unit: string, floor?: Floor) =>
    console.log(
      `goal ${text}: ${(atMost ? value <= limit : value >= limit) ? 'met' : 'NOT met'} (${value.toFixed(unit === '%' ? 1 : 2)}${unit}` +
        `${floor === undefined ? '' : floorNote(floor, limit, atMost, unit)})`,
    );
  const shapeFloor = (value: number): Floor => ({ what: "the shape's floor", value });
  const ratio = (key: string, q: 'p50' | 'p99') => row(key).latency[q] / row(twinKey(key)).latency[q];
  const share = (key: string) => (100 * row(key).latency.rate) / row(twinKey(key)).latency.rate;
  console.log();
  // With fsync, each answer waits for one fsync of the disk at the least: the goals allow one.
  const bareOf = (load: string) => row(`${load} barePost`).latency;
  goal(
    `sign p50 (fsync), one keep-alive client, ≤ 4× bare + one fsync (${ms(4 * bareOf('one-client').p50 + fsync.p50)} ms)`,
    row('one-client sign').latency.p50,
    4 * bareOf('one-client').p50 + fsync.p50,
    true,
    ' ms',
    shapeFloor(floorOf('one-client').latency.p50),
  );
  goal(
    `sign p99 (fsync), paced 500/s, ≤ 5× bare + one fsync (${ms(5 * bareOf('paced-500').p99 + fsync.p50)} ms)`,
    row('paced-500 sign').latency.p99,
    5 * bareOf('paced-500').p99 + fsync.p50,
    true,
    ' ms',
    shapeFloor(floorOf('paced-500').latency.p99),
  );
  goal('sign p50 (none), one keep-alive client, ≤ 4× bare', ratio('one-client signNone', 'p50'), 4, true, '×');
  goal(
    'sign throughput (replica) at 50 connections ≥ 2,000/s',
    row('saturated signReplica').latency.rate,
    2_000,
    false,
    '/s',
  );
  const replicaPaced = row('paced-500 signReplica').latency;
  goal(
    'sign p99 (replica), paced 500/s, ≤ 50 ms, every sign answered 200',
    replicaPaced.count === Math.round(500 * SECONDS) && replicaPaced.failures === 0 ? replicaPaced.p99 : Infinity,
    50,
    true,
    ' ms',
  );
  goal('gateway + signer CPU per sign at 500/s ≤ 700 µs', row('paced-500 sign').cpuUs, 700, true, ' µs', {
    what: "the shape's floor with the signature, the digest and the record's client side",
    value: floorOf('paced-500').cpuUs + signingSteps.reduce((a, st) => a + st.cpuUs, 0),
  });
  // A firm quote adds one node round trip (the eth_call) and little else.
  const firmExtra = row('one-client signFirm').latency.p50 - row('one-client sign').latency.p50;
  const nodeTrip = row('one-client nodeQuote').latency.p50;
  goal(
    `sign with amountIn p50 − sign p50 ≤ node round trip (${ms(nodeTrip)} ms) + 1 ms`,
    firmExtra,
    nodeTrip + 1,
    true,
    ' ms',
  );
  goal('sign with amountIn p99, paced 100/s, ≤ 100 ms', row('paced-100 signFirm').latency.p99, 100, true, ' ms');
  // An exact limit's reservation is made one request ahead (rate-limiter.ts): off the path, so
  // one client pays no second fsync for it. (The Redis call itself still costs a wake-up.)
  const limitExtra = row('one-client signLimited').latency.p50 - row('one-client sign').latency.p50;
  goal(
    `sign p50 (fsync), one client, exact rate limit − batched ≤ one fsync alone (${ms(fsync.p50)} ms)`,
    limitExtra,
    fsync.p50,
    true,
    ' ms',
  );
  goal('sign throughput at 50 connections ≥ 12 % of bare', share('saturated sign'), 12, false, '%');
  goal('price throughput at 50 connections ≥ 40 % of bare', share('saturated price'), 40, false, '%');
  printOverloadRows(overload, GATEWAY_SETTINGS.signDeadlineMs.default!);
  await referenceRows(redis, REDIS_URL, prefix, SECONDS);
  await stopEverything();

  const left = await redis.keys(`${prefix}:*`);
  if (left.length) await redis.del(...left);
  redis.disconnect();
}

main().catch(async (err: unknown) => {
  console.error(err);
  // The server processes must not outlive a failed run.
  stopChildren();
  await stopEverything();
  process.exit(1);
});
