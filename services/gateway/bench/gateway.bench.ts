/**
 * `npm run bench gateway`: what an integrator feels and what an operator pays, side by side in
 * one run with bare node:http twins answering the same bytes (this machine's jitter is large:
 * only the ratios within one run mean much).
 *
 * Topology as deployed: the gateway and the signer each in their own child process; the bare
 * twins in a third. Rows:
 * 1. one keep-alive client, one request at a time (open-loop.ts closedLoop): sign and price
 *    p50/p99 against the bare POST and bare GET twins;
 * 2. an open loop at an evenly paced 100 and 500 requests/s over 10 keep-alive sockets
 *    (open-loop.ts openLoop): p50/p99 from when each request was due, and the servers' CPU per
 *    request (gateway + signer; the bare twin's own);
 * 3. saturation, autocannon with 50 connections: throughput as a share of the twin's (a floor);
 * 4. for the record, not shipped: the gateway's steps and the signer's use case in ONE process,
 *    no hop (in-process.ts), at the same paced rate and one client;
 * 5. the cost floor of a signed quote (sign-floor.ts), with the HTTP hop measured by a bare
 *    forwarder (bare POST → one keep-alive HTTP hop → bare POST);
 * 6. for the capacity plan: requests per second per core of each process (the inverse of its
 *    CPU per request), Redis's CPU per request (INFO; exact on `npm run bench`'s private
 *    Redis), and what the audit trail holds per signature (redis-footprint.ts): memory in the
 *    stream and its index, the append-only file's growth, and both per day at 100 and 1,000
 *    signatures/s.
 * BENCH_PROFILE=1 adds where each server's CPU goes per request in the paced rows
 * (profile-breakdown.ts); BENCH_CPU_PROF=<dir> writes V8 CPU profiles of the servers on exit.
 *
 * Goals (benchmarks, not tests): sign p50 one client ≤ 4× bare; sign p99 paced 500/s ≤ 5× bare;
 * gateway + signer CPU per sign at 500/s ≤ 700 µs; saturated sign ≥ 12 % of bare; saturated
 * price ≥ 40 % of bare.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { Session, type Profiler } from 'node:inspector';
import { Agent, createServer, request as httpRequest, type RequestListener } from 'node:http';
import { randomBytes, randomUUID } from 'node:crypto';
import path from 'node:path';
import { Writable } from 'node:stream';
import autocannon from 'autocannon';
import {
  SERVICE_NODE_FLAGS,
  createLogger,
  createRedis,
  listen,
  redisKeys,
  redisReady,
  type RedisClient,
} from '@pmm/core';
import { createApp, generateApiKey, hashApiKey, loadGatewayConfig } from '@pmm/gateway';
import { loadSignerConfig, startSigner } from '@pmm/signer';
import { closedLoop, openLoop, type LatencyFigures, type LoadRequest } from './open-loop';
import { profileBreakdown, type StepCost } from './profile-breakdown';
import { aofMark, auditFootprint, bytesPerDay, redisCpuSeconds, signatureIndexEntryBytes } from './redis-footprint';
import { measureSignFloor } from './sign-floor';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const CONNECTIONS = 50;
const ROOT = path.resolve(__dirname, '..', '..', '..');
const INTERNAL_TOKEN = 'bench-internal-token-0123456789';
const SIGN_PATH = '/v2/swap/sign';
const PRICE_PATH = '/v2/price?chainId=8453';

/** A book of the shape the indexer writes: 3 pairs × 10 levels per side (about 2.5 KB). */
function sampleBook(): string {
  const level = (i: number, side: number) => ({
    price: (3000 + side * i * 1.5).toFixed(6),
    amount: (0.25 * (i + 1)).toFixed(8),
  });
  const pairs = [1, 2, 3].map((n) => ({
    baseToken: `0x${String(n).repeat(40)}`,
    quoteToken: '0x833589fcd6edb6e08f4c7c32d4f71b54bda02913',
    bids: Array.from({ length: 10 }, (_, i) => level(i, -1)),
    asks: Array.from({ length: 10 }, (_, i) => level(i, 1)),
  }));
  return JSON.stringify({ chainId: 8453, blockNumber: 12_345_678, blockTime: Math.floor(Date.now() / 1000), pairs });
}

const QUOTE_TOKEN = '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913';
const BASE_TOKEN = '0x4200000000000000000000000000000000000006';
const USER = `0x${'ab'.repeat(20)}`;
const SIGN_BODY = JSON.stringify({
  chainId: 8453,
  tokenIn: QUOTE_TOKEN,
  tokenOut: BASE_TOKEN,
  fee: '30',
  userAddress: USER,
  amountIn: '1000000',
  minAmountOut: '0',
});

// ---------------------------------------------------------------- children: the servers
/** What a server child reports once listening: the ports of the servers it runs. */
interface Ports {
  bareGet?: number;
  barePost?: number;
  bareHop?: number;
  signer?: number;
  gateway?: number;
  inProcess?: number;
}

/** The headers the gateway adds, for the requests sent to the signer directly. */
const SIGNER_HEADERS = {
  'content-type': 'application/json',
  'x-internal-token': INTERNAL_TOKEN,
  'x-integrator-id': 'bench',
};

async function listenOn(handler: RequestListener): Promise<number> {
  const server = createServer(handler);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return (server.address() as { port: number }).port;
}

/** Answers every request with `body`, once the request's body has been read. */
function answerWith(body: Buffer): RequestListener {
  return (req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': body.length });
      res.end(body);
    });
  };
}

/** Forwards every POST over a keep-alive pool to `port` and answers its bytes: one bare hop. */
function forwardTo(port: number): RequestListener {
  const agent = new Agent({ keepAlive: true, maxSockets: 512 });
  return (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const upstream = httpRequest(
        {
          host: '127.0.0.1',
          port,
          method: 'POST',
          path: req.url,
          agent,
          headers: { 'content-type': 'application/json', 'content-length': body.length },
        },
        (answer) => {
          const parts: Buffer[] = [];
          answer.on('data', (c: Buffer) => parts.push(c));
          answer.on('end', () => {
            const out = Buffer.concat(parts);
            res.writeHead(answer.statusCode ?? 502, {
              'Content-Type': 'application/json; charset=utf-8',
              'Content-Length': out.length,
            });
            res.end(out);
          });
        },
      );
      upstream.on('error', () => {
        res.statusCode = 502;
        res.end();
      });
      upstream.end(body);
    });
  };
}

async function startBenchSigner(prefix: string): Promise<number> {
  const config = loadSignerConfig({
    env: {
      PORT: '0',
      REDIS_URL,
      REDIS_KEY_PREFIX: prefix,
      INTERNAL_TOKEN,
      // What npm run bench's private Redis supports (auto: fsync); another mode with REDIS_URL.
      ...(process.env.REDIS_DURABILITY ? { REDIS_DURABILITY: process.env.REDIS_DURABILITY } : {}),
      SERVED_CHAINS: '8453',
      SIGNER_KEY_8453: `0x${randomBytes(32).toString('hex')}`,
      LOG_LEVEL: 'warn',
    },
    file: {},
  });
  const signer = await startSigner(config, createLogger({ service: 'signer', level: 'warn', stream: discard() }));
  return signer.served.port;
}

async function startBenchGateway(prefix: string, signerUrl: string) {
  const gw = createApp({
    // From the declared settings, as main.ts loads them: a new setting needs no edit here.
    config: loadGatewayConfig({
      env: {
        REDIS_KEY_PREFIX: prefix,
        SIGNER_URL: signerUrl,
        INTERNAL_TOKEN,
        BOOK_CACHE_MS: '500',
        KEY_CACHE_MS: '500',
      },
      file: {},
    }),
    redis: createRedis(REDIS_URL, { name: 'gw' }),
    subscriber: createRedis(REDIS_URL, { role: 'subscriber', name: 'gw-sub' }),
    logger: createLogger({ service: 'gateway', level: 'info', stream: discard() }),
  });
  await gw.start();
  const served = await listen(gw.app, 0, '127.0.0.1');
  return served.port;
}

function discard(): Writable {
  return new Writable({
    write(_chunk, _enc, cb) {
      cb();
    },
  });
}

/** The bare twins: GET answering the stored book's bytes, POST answering a signed quote's, and a bare hop. */
async function serveBare(prefix: string, signed: Buffer): Promise<Ports> {
  const redis = createRedis(REDIS_URL, { name: 'bench' });
  await redisReady(redis);
  const book = Buffer.from((await redis.get(redisKeys(prefix).book(8453)))!, 'utf8');
  redis.disconnect();
  const barePost = await listenOn(answerWith(signed));
  return {
    bareGet: await listenOn((_req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': book.length });
      res.end(book);
    }),
    barePost,
    bareHop: await listenOn(forwardTo(barePost)),
  };
}

/** The in-process composition (in-process.ts), loaded only when it exists in this checkout. */
async function serveInProcess(prefix: string): Promise<Ports> {
  const { startInProcessSign } = (await import('./in-process')) as typeof import('./in-process');
  return { inProcess: await startInProcessSign({ redisUrl: REDIS_URL, prefix }) };
}

/** Runs a server child: `role` is serve-bare, serve-signer, serve-gateway or serve-inprocess. */
async function serve(role: string, prefix: string, extra?: string): Promise<void> {
  const ports: Ports =
    role === 'serve-bare'
      ? await serveBare(prefix, Buffer.from(extra!, 'base64'))
      : role === 'serve-signer'
        ? { signer: await startBenchSigner(prefix) }
        : role === 'serve-inprocess'
          ? await serveInProcess(prefix)
          : { gateway: await startBenchGateway(prefix, extra!) };
  // The parent asks for this process's CPU time around each case (CPU per request is the
  // figure that survives a machine shared with other work; req/s does not).
  // A clean exit on SIGTERM, so that --cpu-prof writes its profile.
  process.once('SIGTERM', () => process.exit(0));
  // BENCH_PROFILE=1: the parent also asks for a CPU profile of each case (profile-breakdown.ts).
  let session: Session | undefined;
  const inspect = <T>(method: string) =>
    new Promise<T>((resolve, reject) =>
      session!.post(method, (err, result) => (err ? reject(err) : resolve(result as T))),
    );
  process.on('message', (m) => {
    if (m === 'cpu') {
      const u = process.cpuUsage();
      process.send!({ cpu: u.user + u.system });
    } else if (m === 'profile-start') {
      session = new Session();
      session.connect();
      void inspect('Profiler.enable')
        .then(() => inspect('Profiler.start'))
        .then(() => process.send!({ profiling: true }));
    } else if (m === 'profile-stop') {
      void inspect<{ profile: Profiler.Profile }>('Profiler.stop').then(({ profile }) => {
        session!.disconnect();
        process.send!({ profile });
      });
    }
  });
  process.send!(ports);
}

// ---------------------------------------------------------------- parent: load and report
interface Row {
  name: string;
  latency: LatencyFigures;
  /** Server CPU µs per request, summed over the processes serving the case. */
  cpuUs: number;
  /** The same, per process, in the order they were given. */
  cpuUsEach: number[];
  /** Redis's CPU µs per request over the case (every client's work, the bench's own included). */
  redisUs: number;
  /** With BENCH_PROFILE=1: CPU µs per request by step, per process. */
  breakdown?: StepCost[][];
}

/** Sends `request` to a server child and resolves with the `key` field of its answer. */
function ask<T>(child: ChildProcess, request: string, key: string): Promise<T> {
  return new Promise((resolve) => {
    const on = (m: unknown) => {
      if (typeof m === 'object' && m !== null && key in m) {
        child.off('message', on);
        resolve((m as Record<string, T>)[key]!);
      }
    };
    child.on('message', on);
    child.send(request);
  });
}

const childCpu = (child: ChildProcess) => ask<number>(child, 'cpu', 'cpu');
const PROFILE = process.env.BENCH_PROFILE === '1';

/** Runs `drive` and charges the servers' and Redis's CPU time to the requests it answered. */
async function measure(
  name: string,
  servers: ChildProcess[],
  redis: RedisClient,
  drive: () => Promise<LatencyFigures>,
  profile = false,
): Promise<Row> {
  if (profile) await Promise.all(servers.map((c) => ask(c, 'profile-start', 'profiling')));
  const before = await Promise.all(servers.map(childCpu));
  const redisBefore = await redisCpuSeconds(redis);
  const latency = await drive();
  const redisAfter = await redisCpuSeconds(redis);
  const after = await Promise.all(servers.map(childCpu));
  const total = latency.count || 1;
  const cpuUsEach = after.map((cpu, i) => (cpu - before[i]!) / total);
  const profiles = profile
    ? await Promise.all(servers.map((c) => ask<Profiler.Profile>(c, 'profile-stop', 'profile')))
    : undefined;
  if (latency.failures > 0) console.log(`  (${name}: ${latency.failures} answers not 2xx)`);
  return {
    name,
    latency,
    cpuUs: cpuUsEach.reduce((a, b) => a + b, 0),
    cpuUsEach,
    redisUs: ((redisAfter - redisBefore) * 1e6) / total,
    breakdown: profiles?.map((p) => profileBreakdown(p, total)),
  };
}

/** autocannon at saturation, in the same figures as the other loads. */
async function saturate(request: LoadRequest): Promise<LatencyFigures> {
  const r = await autocannon({
    url: request.url,
    method: request.method,
    headers: request.headers,
    body: request.body,
    connections: CONNECTIONS,
    duration: SECONDS,
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

const children = new Set<ChildProcess>();

/** Forks a server child (this file, `serve …`) and waits for its ports. */
async function startChild(args: string[]): Promise<{ child: ChildProcess; ports: Ports }> {
  const child = fork(__filename, args, {
    // The servers run with the V8 flags production uses (bare server included, for fairness).
    // BENCH_CPU_PROF=<dir>: the servers write a V8 CPU profile there on exit (node --cpu-prof).
    execArgv: [
      ...SERVICE_NODE_FLAGS,
      ...(process.env.BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] : []),
      '-r',
      path.join(ROOT, 'scripts/lib/ts-register.cjs'),
    ],
    stdio: ['inherit', 'inherit', 'inherit', 'ipc'],
  });
  children.add(child);
  child.once('exit', () => children.delete(child));
  const ports = await new Promise<Ports>((resolve, reject) => {
    child.once('message', (m) => resolve(m as Ports));
    child.once('exit', (code) => reject(new Error(`server process exited (${code})`)));
  });
  return { child, ports };
}

/** Stops a child and waits for its exit (its CPU profile is written by then). */
function stopChild(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}

const col = (s: string, width: number) => s.padStart(width);
const ms = (v: number) => (v < 10 ? v.toFixed(2) : v.toFixed(1));

async function seed(redis: RedisClient, prefix: string): Promise<string> {
  const keys = redisKeys(prefix);
  const apiKey = generateApiKey();
  await redis.set(keys.book(8453), sampleBook());
  await redis.set(
    keys.integrator('bench'),
    JSON.stringify({
      id: 'bench',
      name: 'bench',
      whitelist: [USER],
      chains: [],
      rateLimit: { requests: 1_000_000_000, windowSeconds: 60 },
      disabled: false,
    }),
  );
  await redis.set(
    keys.apiKey(hashApiKey(apiKey)),
    JSON.stringify({ integratorId: 'bench', keyId: apiKey.slice(0, 12), createdAt: Date.now(), disabled: false }),
  );
  await redis.set(
    keys.pairs(8453),
    JSON.stringify({
      chainId: 8453,
      quoteToken: { address: QUOTE_TOKEN, symbol: 'USDC', decimals: 6 },
      baseTokens: [{ address: BASE_TOKEN, symbol: 'WETH', decimals: 18 }],
      blockNumber: 1,
      refreshedAt: Date.now(),
    }),
  );
  return apiKey;
}

/** Whether this checkout has the in-process composition (it is measured when it does). */
function hasInProcess(): boolean {
  try {
    require.resolve('./in-process');
    return true;
  } catch {
    return false;
  }
}

async function main(): Promise<void> {
  if (process.argv[2]?.startsWith('serve')) return serve(process.argv[2], process.argv[3]!, process.argv[4]);
  const prefix = `bench-${randomUUID().slice(0, 8)}`;
  const redis: RedisClient = createRedis(REDIS_URL, { name: 'bench-setup' });
  await redisReady(redis);
  const apiKey = await seed(redis, prefix);

  // As deployed: signer and gateway in their own processes; the bare twins in a third.
  const signer = await startChild(['serve-signer', prefix]);
  const signerUrl = `http://127.0.0.1:${signer.ports.signer!}`;
  const signed = await fetch(`${signerUrl}${SIGN_PATH}`, { method: 'POST', headers: SIGNER_HEADERS, body: SIGN_BODY });
  if (signed.status !== 200) throw new Error(`bench sign request: ${signed.status} ${await signed.text()}`);
  const signedBytes = Buffer.from(await signed.arrayBuffer());
  const gateway = await startChild(['serve-gateway', prefix, signerUrl]);
  const bare = await startChild(['serve-bare', prefix, signedBytes.toString('base64')]);
  const inProcess = hasInProcess() ? await startChild(['serve-inprocess', prefix]) : undefined;
  const pair = [gateway.child, signer.child];
  const at = (port: number | undefined, route: string) => `http://127.0.0.1:${port!}${route}`;
  const headers = { 'x-api-key': apiKey };
  const post = (port: number | undefined): LoadRequest => ({
    url: at(port, SIGN_PATH),
    method: 'POST',
    headers: { ...headers, 'content-type': 'application/json' },
    body: SIGN_BODY,
  });
  const get = (port: number | undefined): LoadRequest => ({ url: at(port, PRICE_PATH), method: 'GET', headers });
  const bp = bare.ports;
  const cases = {
    barePost: { request: post(bp.barePost), servers: [bare.child] },
    sign: { request: post(gateway.ports.gateway), servers: pair },
    bareGet: { request: get(bp.bareGet), servers: [bare.child] },
    price: { request: get(gateway.ports.gateway), servers: [gateway.child] },
    bareHop: { request: post(bp.bareHop), servers: [bare.child] },
    ...(inProcess ? { inProcess: { request: post(inProcess.ports.inProcess), servers: [inProcess.child] } } : {}),
  };
  type CaseName = keyof typeof cases;
  const caseOf = (n: CaseName) => cases[n]!;

  // The append-only file's size before the first signature (the warm-up signs too).
  const aofBefore = await aofMark(redis);
  // Warm-up (JIT, keep-alive sockets, caches): not measured.
  for (const c of Object.values(cases)) await openLoop(c.request, 500, 1);

  const rows = new Map<string, Row>();
  const run = async (label: string, names: CaseName[], drive: (r: LoadRequest) => Promise<LatencyFigures>) => {
    for (const n of names)
      rows.set(
        `${label} ${n}`,
        await measure(`${label} ${n}`, caseOf(n).servers, redis, () => drive(caseOf(n).request), PROFILE),
      );
  };
  const withInProcess = (names: CaseName[]): CaseName[] => (inProcess ? [...names, 'inProcess'] : names);
  await run('one-client', withInProcess(['barePost', 'sign', 'bareHop', 'bareGet', 'price']), (r) =>
    closedLoop(r, SECONDS),
  );
  await run('paced-100', ['barePost', 'sign', 'bareHop'], (r) => openLoop(r, 100, SECONDS));
  await run('paced-500', withInProcess(['barePost', 'sign', 'bareHop', 'bareGet', 'price']), (r) =>
    openLoop(r, 500, SECONDS),
  );
  await run('saturated', withInProcess(['barePost', 'sign', 'bareGet', 'price', 'bareHop']), saturate);

  await Promise.all([gateway, signer, bare, inProcess].filter((c) => c !== undefined).map((c) => stopChild(c.child)));
  // Before the floor below, which writes sample records of its own to the same trail.
  const audit = await auditFootprint(redis, prefix, 8453, aofBefore);

  const row = (key: string) => rows.get(key)!;
  console.log(`\n${SECONDS} s per row; latency in ms; CPU = the serving processes' CPU µs per request`);
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
  // BENCH_PROFILE=1: where the paced rows' CPU goes, per process.
  for (const r of rows.values()) {
    if (!r.breakdown) continue;
    r.breakdown.forEach((steps, i) => {
      const who = r.name.endsWith('sign') ? ['gateway', 'signer'][i] : 'server';
      console.log(`\n${r.name}: CPU µs per request in the ${who} process, by step (profiled: slower than the table):`);
      for (const s of steps) if (s.us >= 0.5) console.log(`  ${s.name.padEnd(48)} ${col(s.us.toFixed(1), 7)}`);
    });
  }

  // The floor: what a signed quote costs at the least, step by step (saturated rows: CPU per
  // request is lowest there, where each wake-up serves several requests).
  const barePost = row('saturated barePost');
  const steps = [
    { name: 'bare node:http POST answer (saturated row)', cpuUs: barePost.cpuUs },
    {
      name: 'one keep-alive HTTP hop (bareHop − barePost, saturated)',
      cpuUs: row('saturated bareHop').cpuUs - barePost.cpuUs,
    },
    ...(await measureSignFloor(REDIS_URL, prefix)),
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

  const goal = (text: string, value: number, limit: number, atMost: boolean, unit: string) =>
    console.log(
      `goal ${text}: ${(atMost ? value <= limit : value >= limit) ? 'met' : 'NOT met'} (${value.toFixed(unit === '%' ? 1 : 2)}${unit})`,
    );
  const ratio = (key: string, q: 'p50' | 'p99') => row(key).latency[q] / row(twinKey(key)).latency[q];
  const share = (key: string) => (100 * row(key).latency.rate) / row(twinKey(key)).latency.rate;
  console.log();
  goal('sign p50, one keep-alive client, ≤ 4× bare', ratio('one-client sign', 'p50'), 4, true, '×');
  goal('sign p99, paced 500/s, ≤ 5× bare', ratio('paced-500 sign', 'p99'), 5, true, '×');
  goal('gateway + signer CPU per sign at 500/s ≤ 700 µs', row('paced-500 sign').cpuUs, 700, true, ' µs');
  goal('sign throughput at 50 connections ≥ 12 % of bare', share('saturated sign'), 12, false, '%');
  goal('price throughput at 50 connections ≥ 40 % of bare', share('saturated price'), 40, false, '%');

  const left = await redis.keys(`${prefix}:*`);
  if (left.length) await redis.del(...left);
  redis.disconnect();
}

main().catch((err: unknown) => {
  console.error(err);
  // The server children must not outlive a failed run.
  for (const child of children) child.kill('SIGTERM');
  process.exit(1);
});
