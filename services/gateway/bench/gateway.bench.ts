/**
 * `npm run bench gateway`: in one run, on one machine, with autocannon (50 connections, ~5 s each):
 * 1. a bare node:http server answering the same bytes as /v2/price (the ceiling of 2-4);
 * 2. the gateway's GET /v2/price with auth, rate limit (batched reservations: the default for
 *    a high limit), request logging (LOG_LEVEL info, lines written to a discarding stream) and
 *    metrics on;
 * 3. the same with the rate limiter forced to one Redis call per request (its exact mode);
 * 4. the same at LOG_LEVEL debug (a log line for every request);
 * 5. a bare node:http server that reads a POST body and answers the bytes of a signed quote
 *    (the ceiling of 6-9);
 * 6. a bare node:http server that forwards each POST over one keep-alive HTTP hop to (5) and
 *    answers its bytes: what one HTTP hop costs, with nothing else done (the way the gateway
 *    reached the signer before the sign link; kept for comparison);
 * 6b. the same over the sign link (core sign-link/) to a link server answering those bytes:
 *    what the gateway's way to the signer costs, with nothing else done;
 * 7. POST /v2/swap/sign through gateway and signer, both in the same child process;
 * 8. the signer alone (the headers the gateway adds), same process;
 * 9. POST /v2/swap/sign through gateway and signer in SEPARATE processes, as deployed (each
 *    its own child), and the signer of that pair alone.
 * Then the cost floor of a signed quote (sign-floor.ts): the unavoidable steps measured alone.
 * BENCH_PROFILE=1 adds, for each sign row, where each server process's CPU goes per request
 * (profile-breakdown.ts); BENCH_ONLY=sign runs the sign rows only.
 * Prints req/s, p50/p99, the ratio to its bare twin and the servers' CPU per request. Goals:
 * (2) ≥ 40 % of (1); (7) ≥ 25 % of (5) with p99 < 20 ms.
 *
 * The servers run in child processes, so that the load generator does not steal their CPU.
 * The machine has 2 cores: in the one-process topology the servers get one core and autocannon
 * and Redis the other; in the separate topology gateway, signer, autocannon and Redis share both.
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
  SignLinkClient,
  createLogger,
  createRedis,
  listen,
  redisKeys,
  redisReady,
  serveSignLink,
  type RedisClient,
} from '@pmm/core';
import { createApp, generateApiKey, hashApiKey, loadGatewayConfig } from '@pmm/gateway';
import { loadSignerConfig, startSigner } from '@pmm/signer';
import { profileBreakdown, type StepCost } from './profile-breakdown';
import { measureSignFloor } from './sign-floor';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const DURATION_S = Number(process.env.BENCH_SECONDS ?? 5);
const CONNECTIONS = 50;
const ROOT = path.resolve(__dirname, '..', '..', '..');
const INTERNAL_TOKEN = 'bench-internal-token-0123456789';

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
  bare?: number;
  bareSign?: number;
  bareHop?: number;
  bareLinkHop?: number;
  signer?: number;
  gateway?: number;
  gatewayExact?: number;
  gatewayDebug?: number;
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

/** A sign-link server answering every request with `body`, and a bare node:http server forwarding each POST to it. */
async function linkHopTo(body: Buffer): Promise<number> {
  const server = createServer((_req, res) => res.end());
  serveSignLink(server, {
    authorize: () => undefined,
    handle: () => ({
      status: 200,
      headers: { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': String(body.length) },
      body,
    }),
    maxBodyBytes: 16 * 1024,
    logger: createLogger({ service: 'bench-link', silent: true }),
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const link = new SignLinkClient({
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
    headers: {},
    maxAnswerBytes: 1024 * 1024,
  });
  return listenOn((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      link.request({ path: req.url ?? '/', headers: {} }, Buffer.concat(chunks)).answer.then(
        (answer) => {
          res.writeHead(answer.status, answer.headers);
          res.end(answer.body);
        },
        () => {
          res.statusCode = 502;
          res.end();
        },
      );
    });
  });
}

async function startBenchSigner(prefix: string): Promise<number> {
  const config = loadSignerConfig({
    env: {
      PORT: '0',
      REDIS_URL,
      REDIS_KEY_PREFIX: prefix,
      INTERNAL_TOKEN,
      SERVED_CHAINS: '8453',
      SIGNER_KEY_8453: `0x${randomBytes(32).toString('hex')}`,
      LOG_LEVEL: 'warn',
    },
    file: {},
  });
  const signer = await startSigner(config, createLogger({ service: 'signer', level: 'warn', stream: discard() }));
  return signer.served.port;
}

async function startBenchGateway(prefix: string, signerUrl: string, level: string, exactUpTo?: number) {
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
    logger: createLogger({ service: 'gateway', level, stream: discard() }),
    rateLimiter: exactUpTo === undefined ? {} : { exactUpTo },
  });
  await gw.start();
  const served = await listen(gw.app, 0, '127.0.0.1');
  return served.port;
}

/** The one-process topology: every server of the price and sign cases in this process. */
async function serveAll(prefix: string): Promise<Ports> {
  const keys = redisKeys(prefix);
  const redis = createRedis(REDIS_URL, { name: 'bench' });
  await redisReady(redis);
  const bare = await listenOn((_req, res) => {
    res.writeHead(200, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': bareBody.length });
    res.end(bareBody);
  });
  const bareBody = Buffer.from((await redis.get(keys.book(8453)))!, 'utf8');
  redis.disconnect();

  const signer = await startBenchSigner(prefix);
  const signerUrl = `http://127.0.0.1:${signer}`;
  // The bare twin of the sign route answers the bytes the signer answers for the bench's body.
  const signed = await fetch(`${signerUrl}/v2/swap/sign`, { method: 'POST', headers: SIGNER_HEADERS, body: SIGN_BODY });
  if (signed.status !== 200) throw new Error(`bench sign request: ${signed.status} ${await signed.text()}`);
  const signedBytes = Buffer.from(await signed.arrayBuffer());
  const bareSign = await listenOn(answerWith(signedBytes));
  return {
    bare,
    bareSign,
    bareHop: await listenOn(forwardTo(bareSign)),
    bareLinkHop: await linkHopTo(signedBytes),
    signer,
    gateway: await startBenchGateway(prefix, signerUrl, 'info'),
    gatewayExact: await startBenchGateway(prefix, signerUrl, 'info', Infinity),
    gatewayDebug: await startBenchGateway(prefix, signerUrl, 'debug'),
  };
}

/** Runs a server child: `role` is serve-all, serve-signer or serve-gateway. */
async function serve(role: string, prefix: string, signerUrl?: string): Promise<void> {
  const ports: Ports =
    role === 'serve-all'
      ? await serveAll(prefix)
      : role === 'serve-signer'
        ? { signer: await startBenchSigner(prefix) }
        : { gateway: await startBenchGateway(prefix, signerUrl!, 'info') };
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

function discard(): Writable {
  return new Writable({
    write(_chunk, _enc, cb) {
      cb();
    },
  });
}

// ---------------------------------------------------------------- parent: load and report
interface Figures {
  name: string;
  rps: number;
  /** Server-process CPU time per request, µs (summed over the processes serving the case). */
  cpuUs: number;
  /** The same, per process, in the order they were given. */
  cpuUsEach: number[];
  /** With BENCH_PROFILE=1: CPU µs per request by step, per process. */
  breakdown?: StepCost[][];
  p50: number;
  p99: number;
  non2xx: number;
  errors: number;
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

async function load(name: string, opts: autocannon.Options, servers: ChildProcess[]): Promise<Figures> {
  if (PROFILE) await Promise.all(servers.map((c) => ask(c, 'profile-start', 'profiling')));
  const before = await Promise.all(servers.map(childCpu));
  const r = await autocannon({ connections: CONNECTIONS, duration: DURATION_S, ...opts });
  const after = await Promise.all(servers.map(childCpu));
  const total = r.requests.total || 1;
  const cpuUsEach = after.map((cpu, i) => (cpu - before[i]!) / total);
  const profiles = PROFILE
    ? await Promise.all(servers.map((c) => ask<Profiler.Profile>(c, 'profile-stop', 'profile')))
    : undefined;
  return {
    name,
    rps: r.requests.average,
    cpuUs: cpuUsEach.reduce((a, b) => a + b, 0),
    cpuUsEach,
    breakdown: profiles?.map((p) => profileBreakdown(p, total)),
    p50: r.latency.p50,
    p99: r.latency.p99,
    non2xx: r.non2xx,
    errors: r.errors + r.timeouts,
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

async function main(): Promise<void> {
  if (process.argv[2]?.startsWith('serve')) return serve(process.argv[2], process.argv[3]!, process.argv[4]);
  const prefix = `bench-${randomUUID().slice(0, 8)}`;
  const keys = redisKeys(prefix);
  const redis: RedisClient = createRedis(REDIS_URL, { name: 'bench-setup' });
  await redisReady(redis);
  const apiKey = generateApiKey();
  const user = USER;
  await redis.set(keys.book(8453), sampleBook());
  await redis.set(
    keys.integrator('bench'),
    JSON.stringify({
      id: 'bench',
      name: 'bench',
      whitelist: [user],
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

  const headers = { 'x-api-key': apiKey };
  const results: Figures[] = [];
  const priceUrl = '/v2/price?chainId=8453';
  const post = {
    method: 'POST' as const,
    headers: { ...headers, 'content-type': 'application/json' },
    body: SIGN_BODY,
  };
  const signerPost = { method: 'POST' as const, headers: SIGNER_HEADERS, body: SIGN_BODY };
  const url = (port: number | undefined, route: string) => `http://127.0.0.1:${port!}${route}`;

  // One process: every server in one child.
  const all = await startChild(['serve-all', prefix]);
  const one = [all.child];
  const p = all.ports;
  // Warm up the JIT and the caches (not measured).
  await autocannon({ url: url(p.gateway, priceUrl), headers, connections: 10, duration: 1 });
  // BENCH_ONLY=sign: only the sign cases (for profiling the sign path).
  const onlySign = process.env.BENCH_ONLY === 'sign';
  if (!onlySign) {
    results.push(await load('bare node:http, same bytes', { url: url(p.bare, priceUrl) }, one));
    results.push(await load('gateway GET /v2/price', { url: url(p.gateway, priceUrl), headers }, one));
    results.push(
      await load(
        'gateway GET /v2/price, limiter exact (1 Redis call/request)',
        { url: url(p.gatewayExact, priceUrl), headers },
        one,
      ),
    );
    results.push(
      await load(
        'gateway GET /v2/price, LOG_LEVEL debug (a line per request)',
        { url: url(p.gatewayDebug, priceUrl), headers },
        one,
      ),
    );
  }
  // Warm up the sign path too (JIT, keep-alive sockets to the signer, caches).
  await autocannon({ url: url(p.gateway, '/v2/swap/sign'), ...post, connections: 10, duration: 1 });
  await autocannon({ url: url(p.bareHop, '/v2/swap/sign'), ...post, connections: 10, duration: 1 });
  await autocannon({ url: url(p.bareLinkHop, '/v2/swap/sign'), ...post, connections: 10, duration: 1 });
  const signRows: [string, number | undefined, Omit<autocannon.Options, 'url'>][] = [
    ['bare node:http POST, same bytes as a signed quote', p.bareSign, post],
    ['bare POST → one keep-alive HTTP hop → bare POST', p.bareHop, post],
    ['bare POST → sign link → bare link answer', p.bareLinkHop, post],
    ['[one process] gateway POST /v2/swap/sign → signer', p.gateway, post],
    ['[one process] signer POST /v2/swap/sign direct', p.signer, signerPost],
  ];
  for (const [name, port, request] of signRows) {
    results.push(await load(name, { ...request, url: url(port, '/v2/swap/sign') }, one));
  }
  await stopChild(all.child);

  // Separate processes, as deployed: the signer in one child, the gateway in another.
  const signerChild = await startChild(['serve-signer', prefix]);
  const gatewayChild = await startChild(['serve-gateway', prefix, url(signerChild.ports.signer, '')]);
  const pair = [gatewayChild.child, signerChild.child];
  const gatewaySign = url(gatewayChild.ports.gateway, '/v2/swap/sign');
  await autocannon({ url: gatewaySign, ...post, connections: 10, duration: 1 });
  results.push(
    await load('[separate processes] gateway POST /v2/swap/sign → signer', { url: gatewaySign, ...post }, pair),
  );
  results.push(
    await load(
      '[separate processes] signer POST /v2/swap/sign direct',
      { url: url(signerChild.ports.signer, '/v2/swap/sign'), ...signerPost },
      [signerChild.child],
    ),
  );
  await Promise.all([stopChild(gatewayChild.child), stopChild(signerChild.child)]);

  // Each case is compared with its bare twin: the price rows with row 0, the sign rows with the
  // bare POST server.
  const named = (start: string) => results.find((r) => r.name.startsWith(start));
  const barePost = named('bare node:http POST')!;
  const twinOf = (r: Figures): Figures => (r.name.includes('POST') ? barePost : named('bare'))!;
  console.log(`\nautocannon, ${CONNECTIONS} connections, ${DURATION_S} s each`);
  console.log(
    'case'.padEnd(60),
    col('req/s', 9),
    col('p50 ms', 7),
    col('p99 ms', 7),
    col('vs bare', 8),
    col('CPU µs/req', 11),
    col('bare/this CPU', 14),
    col('non-2xx', 8),
  );
  for (const r of results) {
    const twin = twinOf(r);
    console.log(
      r.name.padEnd(60),
      col(r.rps.toFixed(0), 9),
      col(String(r.p50), 7),
      col(String(r.p99), 7),
      col(`${((100 * r.rps) / twin.rps).toFixed(1)}%`, 8),
      col(r.cpuUs.toFixed(1), 11),
      col(`${((100 * twin.cpuUs) / r.cpuUs).toFixed(1)}%`, 14),
      col(String(r.non2xx + r.errors), 8),
    );
  }
  const split = named('[separate processes] gateway')!;
  console.log(
    `[separate processes] CPU µs/req by process: gateway ${split.cpuUsEach[0]!.toFixed(1)}, signer ${split.cpuUsEach[1]!.toFixed(1)}`,
  );

  // BENCH_PROFILE=1: where each sign row's CPU goes, per process.
  for (const r of results) {
    if (!r.breakdown || !r.name.includes('/v2/swap/sign')) continue;
    const processes = r.name.includes('gateway') ? ['gateway', 'signer'] : ['signer'];
    r.breakdown.forEach((steps, i) => {
      const who = r.name.startsWith('[one process]') ? 'the one process' : `the ${processes[i]} process`;
      console.log(`\n${r.name}: CPU µs per request in ${who}, by step (profiled, so slower than the table):`);
      for (const s of steps) if (s.us >= 0.5) console.log(`  ${s.name.padEnd(48)} ${col(s.us.toFixed(1), 7)}`);
    });
  }

  // The floor: what a signed quote costs at the least, step by step.
  const hop = named('bare POST → sign link')!;
  const steps = [
    { name: 'bare node:http POST answer (its row above)', cpuUs: barePost.cpuUs },
    { name: 'one sign-link hop (link row − bare POST row)', cpuUs: hop.cpuUs - barePost.cpuUs },
    ...(await measureSignFloor(REDIS_URL, prefix)),
  ];
  const floor = steps.reduce((a, s) => a + s.cpuUs, 0);
  console.log('\ncost floor of one signed quote through gateway and signer (CPU µs; HTTP rows under load):');
  for (const s of steps) console.log(`  ${s.name.padEnd(58)} ${col(s.cpuUs.toFixed(1), 7)}`);
  console.log(`  ${'floor'.padEnd(58)} ${col(floor.toFixed(1), 7)}`);
  const budget = barePost.cpuUs / 0.25;
  console.log(
    `  25% of the bare twin on its one core allows ${budget.toFixed(1)} µs/req; the floor alone caps the one-process path at ${((100 * barePost.cpuUs) / floor).toFixed(1)}% (bare CPU / floor CPU)`,
  );
  const sign = named('[one process] gateway POST')!;
  console.log(
    `  measured: one process ${sign.cpuUs.toFixed(1)} µs/req (${(sign.cpuUs / floor).toFixed(2)} × floor), separate processes ${split.cpuUs.toFixed(1)} µs/req (${(split.cpuUs / floor).toFixed(2)} × floor)`,
  );

  const ratio = (r: Figures) => (100 * r.rps) / twinOf(r).rps;
  const price = named('gateway GET /v2/price');
  console.log();
  if (price) {
    console.log(
      `goal GET /v2/price ≥ 40% of its bare twin: ${ratio(price) >= 40 ? 'met' : 'NOT met'} (${ratio(price).toFixed(1)}%, p99 ${price.p99} ms)`,
    );
  }
  for (const r of [sign, split]) {
    console.log(
      `goal POST /v2/swap/sign ≥ 25% of its bare twin and p99 < 20 ms, ${r.name.slice(1, r.name.indexOf(']'))}: ${ratio(r) >= 25 && r.p99 < 20 ? 'met' : 'NOT met'} (${ratio(r).toFixed(1)}%, p99 ${r.p99} ms)`,
    );
  }
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
