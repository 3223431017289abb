/**
 * `npm run bench gateway`: in one run, on one machine, with autocannon (50 connections, ~5 s each):
 * 1. a bare node:http server answering the same bytes as /v2/price (the ceiling of 2-4);
 * 2. the gateway's GET /v2/price with auth, rate limit (batched reservations: the default for
 *    a high limit), request logging (LOG_LEVEL info, lines written to a discarding stream) and
 *    metrics on;
 * 3. the same with the rate limiter forced to one Redis call per request (its exact mode);
 * 4. the same at LOG_LEVEL debug (a log line for every request);
 * 5. a bare node:http server that reads a POST body and answers the bytes of a signed quote
 *    (the ceiling of 6);
 * 6. POST /v2/swap/sign through gateway and signer (in the same child process).
 * Prints req/s, p50/p99 and the ratio to its bare twin. Goals: (2) ≥ 40 % of (1); (6) ≥ 25 %
 * of (5) with p99 < 20 ms.
 *
 * The servers run in a child process (one core for them, one for autocannon and Redis), so
 * that the load generator does not steal the servers' CPU.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:http';
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

// ---------------------------------------------------------------- child: the servers
interface Ports {
  bare: number;
  bareSign: number;
  signer: number;
  gateway: number;
  gatewayExact: number;
  gatewayDebug: number;
}

async function serve(prefix: string, apiKeyHash: string): Promise<void> {
  void apiKeyHash;
  const keys = redisKeys(prefix);
  const redis = createRedis(REDIS_URL, { name: 'bench' });
  await redisReady(redis);
  const book = (await redis.get(keys.book(8453)))!;
  const bareBody = Buffer.from(book, 'utf8');
  const bare = createServer((_req, res) => {
    res.writeHead(200, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': bareBody.length });
    res.end(bareBody);
  });
  await new Promise<void>((r) => bare.listen(0, '127.0.0.1', r));

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
  const signerUrl = `http://127.0.0.1:${signer.served.port}`;
  // The bare twin of the sign route answers the bytes the signer answers for the bench's body.
  const signed = await fetch(`${signerUrl}/v2/swap/sign`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-internal-token': INTERNAL_TOKEN, 'x-integrator-id': 'bench' },
    body: SIGN_BODY,
  });
  if (signed.status !== 200) throw new Error(`bench sign request: ${signed.status} ${await signed.text()}`);
  const bareSignBody = Buffer.from(await signed.arrayBuffer());
  const bareSign = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': bareSignBody.length });
      res.end(bareSignBody);
    });
  });
  await new Promise<void>((r) => bareSign.listen(0, '127.0.0.1', r));

  const start = async (level: string, exactUpTo?: number) => {
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
  };
  const ports: Ports = {
    bare: (bare.address() as { port: number }).port,
    bareSign: (bareSign.address() as { port: number }).port,
    signer: signer.served.port,
    gateway: await start('info'),
    gatewayExact: await start('info', Infinity),
    gatewayDebug: await start('debug'),
  };
  // The parent asks for this process's CPU time around each case (CPU per request is the
  // figure that survives a machine shared with other work; req/s does not).
  // A clean exit on SIGTERM, so that --cpu-prof writes its profile.
  process.once('SIGTERM', () => process.exit(0));
  process.on('message', (m) => {
    if (m === 'cpu') {
      const u = process.cpuUsage();
      process.send!({ cpu: u.user + u.system });
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
  /** Server-process CPU time per request, µs. */
  cpuUs: number;
  p50: number;
  p99: number;
  non2xx: number;
  errors: number;
}

let server: ChildProcess;

function serverCpu(): Promise<number> {
  return new Promise((resolve) => {
    const on = (m: unknown) => {
      if (typeof m === 'object' && m !== null && 'cpu' in m) {
        server.off('message', on);
        resolve((m as { cpu: number }).cpu);
      }
    };
    server.on('message', on);
    server.send('cpu');
  });
}

async function load(name: string, opts: autocannon.Options): Promise<Figures> {
  const before = await serverCpu();
  const r = await autocannon({ connections: CONNECTIONS, duration: DURATION_S, ...opts });
  const cpu = (await serverCpu()) - before;
  const total = r.requests.total || 1;
  return {
    name,
    rps: r.requests.average,
    cpuUs: cpu / total,
    p50: r.latency.p50,
    p99: r.latency.p99,
    non2xx: r.non2xx,
    errors: r.errors + r.timeouts,
  };
}

async function main(): Promise<void> {
  if (process.argv[2] === 'serve') return serve(process.argv[3]!, process.argv[4]!);
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
  const quote = QUOTE_TOKEN;
  const base = BASE_TOKEN;
  await redis.set(
    keys.pairs(8453),
    JSON.stringify({
      chainId: 8453,
      quoteToken: { address: quote, symbol: 'USDC', decimals: 6 },
      baseTokens: [{ address: base, symbol: 'WETH', decimals: 18 }],
      blockNumber: 1,
      refreshedAt: Date.now(),
    }),
  );

  const child: ChildProcess = (server = fork(__filename, ['serve', prefix, hashApiKey(apiKey)], {
    // The servers run with the V8 flags production uses (bare server included, for fairness).
    // BENCH_CPU_PROF=<dir>: the servers write a V8 CPU profile there on exit (node --cpu-prof).
    execArgv: [
      ...SERVICE_NODE_FLAGS,
      ...(process.env.BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] : []),
      '-r',
      path.join(ROOT, 'scripts/lib/ts-register.cjs'),
    ],
    stdio: ['inherit', 'inherit', 'inherit', 'ipc'],
  }));
  const ports = await new Promise<Ports>((resolve, reject) => {
    child.once('message', (m) => resolve(m as Ports));
    child.once('exit', (code) => reject(new Error(`server process exited (${code})`)));
  });

  const headers = { 'x-api-key': apiKey };
  const results: Figures[] = [];
  const priceUrl = '/v2/price?chainId=8453';
  // Warm up the JIT and the caches (not measured).
  await autocannon({ url: `http://127.0.0.1:${ports.gateway}${priceUrl}`, headers, connections: 10, duration: 1 });
  // BENCH_ONLY=sign: only the sign cases (for profiling the sign path).
  const onlySign = process.env.BENCH_ONLY === 'sign';
  if (!onlySign) {
    results.push(await load('bare node:http, same bytes', { url: `http://127.0.0.1:${ports.bare}${priceUrl}` }));
    results.push(await load('gateway GET /v2/price', { url: `http://127.0.0.1:${ports.gateway}${priceUrl}`, headers }));
    results.push(
      await load('gateway GET /v2/price, limiter exact (1 Redis call/request)', {
        url: `http://127.0.0.1:${ports.gatewayExact}${priceUrl}`,
        headers,
      }),
    );
    results.push(
      await load('gateway GET /v2/price, LOG_LEVEL debug (a line per request)', {
        url: `http://127.0.0.1:${ports.gatewayDebug}${priceUrl}`,
        headers,
      }),
    );
  }
  {
    const body = SIGN_BODY;
    const post = { method: 'POST' as const, headers: { ...headers, 'content-type': 'application/json' }, body };
    // Warm up the sign path too (JIT, keep-alive sockets to the signer, caches).
    await autocannon({ url: `http://127.0.0.1:${ports.gateway}/v2/swap/sign`, ...post, connections: 10, duration: 1 });
    results.push(
      await load('bare node:http POST, same bytes as a signed quote', {
        url: `http://127.0.0.1:${ports.bareSign}/v2/swap/sign`,
        ...post,
      }),
    );
    results.push(
      await load('gateway POST /v2/swap/sign → signer', {
        url: `http://127.0.0.1:${ports.gateway}/v2/swap/sign`,
        ...post,
      }),
    );
    // The signer alone (the headers the gateway adds): splits the sign row's cost in two.
    results.push(
      await load('signer POST /v2/swap/sign direct (no gateway)', {
        url: `http://127.0.0.1:${ports.signer}/v2/swap/sign`,
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-internal-token': INTERNAL_TOKEN, 'x-integrator-id': 'bench' },
        body,
      }),
    );
  }
  child.kill('SIGTERM');

  // Each case is compared with its bare twin: the price rows with row 0, the sign rows with the
  // bare POST server.
  const named = (prefix: string) => results.find((r) => r.name.startsWith(prefix));
  const twinOf = (r: Figures): Figures => (r.name.includes('POST') ? named('bare node:http POST') : named('bare'))!;
  console.log(`\nautocannon, ${CONNECTIONS} connections, ${DURATION_S} s each (servers in one child process)`);
  console.log(
    'case'.padEnd(64),
    'req/s'.padStart(9),
    'p50 ms'.padStart(7),
    'p99 ms'.padStart(7),
    'vs bare'.padStart(8),
    'CPU µs/req'.padStart(11),
    'bare/this CPU'.padStart(14),
    'non-2xx'.padStart(8),
  );
  for (const r of results) {
    const twin = twinOf(r);
    console.log(
      r.name.padEnd(64),
      r.rps.toFixed(0).padStart(9),
      String(r.p50).padStart(7),
      String(r.p99).padStart(7),
      `${((100 * r.rps) / twin.rps).toFixed(1)}%`.padStart(8),
      r.cpuUs.toFixed(1).padStart(11),
      `${((100 * twin.cpuUs) / r.cpuUs).toFixed(1)}%`.padStart(14),
      String(r.non2xx + r.errors).padStart(8),
    );
  }
  const ratio = (r: Figures) => (100 * r.rps) / twinOf(r).rps;
  const price = named('gateway GET /v2/price');
  const sign = named('gateway POST')!;
  console.log();
  if (price) {
    console.log(
      `goal GET /v2/price ≥ 40% of its bare twin: ${ratio(price) >= 40 ? 'met' : 'NOT met'} (${ratio(price).toFixed(1)}%, p99 ${price.p99} ms)`,
    );
  }
  console.log(
    `goal POST /v2/swap/sign ≥ 25% of its bare twin and p99 < 20 ms: ${ratio(sign) >= 25 && sign.p99 < 20 ? 'met' : 'NOT met'} (${ratio(sign).toFixed(1)}%, p99 ${sign.p99} ms)`,
  );
  const all = await redis.keys(`${prefix}:*`);
  if (all.length) await redis.del(...all);
  redis.disconnect();
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
