/**
 * Signer benchmark (`npm run bench signer`). Prints, from one run on this machine:
 * 1. the in-process signing rate: parseSignRequest (validate) + signQuote (pair/whitelist
 *    checks, encode, keccak, sign, verificationData, calldata) with a warm registry;
 * 2. the raw rate of the secp256k1 backend alone (the library call, nothing else);
 * 3. their ratio (goal >= 0.5);
 * 4. HTTP throughput and p50/p99 latency of the signer app under load (autocannon in a worker
 *    thread, in-process server, real Redis for the stores, logging to a discarding stream),
 *    without and with the audit trail (one Redis script per signature before the answer), and
 *    the ratio (goal >= 0.90) two ways: the measured throughputs, and the CPU capacity (the app
 *    thread's CPU time plus Redis's CPU per signature; Linux), which a shared machine disturbs
 *    far less.
 *    Run it without REDIS_URL: a private Redis makes its CPU figure this benchmark's alone.
 * 5. the key in memory beside a key in a PKCS#11 token (SoftHSM2), same run (key-backends.ts):
 *    signatures/s and p50/p99 of one signature at a paced rate, then the HTTP sign path with
 *    the token's key at a paced rate and under load.
 * 6. firm quotes (firm-quote-rows.ts): node calls per firm quote at a paced 500/s with 20
 *    distinct amounts a block (goal ≤ 0.1), and one client's firm sign beside a plain sign and
 *    the node's own quote() round trip, the signer as a process against a devnet chain.
 *    BENCH_SIGNER_ONLY=firm runs these rows alone.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Writable } from 'node:stream';
import autocannon from 'autocannon';
import {
  encodeSwapCalldata,
  findDuplicateKey,
  signSwapQuote,
  swapDigest,
  hexToBytes,
  parseSignRequest,
  type KeySigner,
  type PairRegistry,
} from '@pmm/protocol';
import {
  DAY_MS,
  DEFAULT_PKCS11_SESSIONS,
  DurableWrites,
  auditDay,
  createDigestSigner,
  createLogger,
  createMetrics,
  createRedis,
  listen,
  rawSign,
  redisKeys,
  redisReady,
} from '@pmm/core';
import { keccak256, toBytes } from 'viem';
import { sampleAuditRecord } from '@pmm/testkit';
import {
  IntegratorStore,
  PairRegistryCache,
  RedisAuditTrail,
  checkSignRequest,
  createApp,
  integratorView,
  signQuote,
  type AuditSink,
  type SignQuoteContext,
} from '../src';
import { benchKeyBackends, openTokenKey } from './key-backends';
import { benchFirmQuotes } from './firm-quote-rows';
import { NO_REFERENCES } from '../src/domain/reference-check';

const CHAIN = 8453;
const key = keccak256(toBytes('pmm-signer-bench-key'));
const addr = (label: string) => `0x${keccak256(toBytes(label)).slice(-40)}`;
const user = addr('bench-user');
const registry: PairRegistry = {
  chainId: CHAIN,
  quoteToken: { address: addr('usdc'), symbol: 'USDC', decimals: 6 },
  baseTokens: [
    { address: addr('weth'), symbol: 'WETH', decimals: 18 },
    { address: addr('wbtc'), symbol: 'WBTC', decimals: 8 },
  ],
  blockNumber: 1,
  refreshedAt: 0,
};
const integratorRecord = {
  id: 'bench',
  name: 'bench',
  whitelist: [user],
  chains: [],
  rateLimit: { requests: 0, windowSeconds: 60 },
  disabled: false,
};

/** Distinct bodies (amounts differ) so that nothing can be served from a cache. */
const bodies = Array.from({ length: 64 }, (_, i) => ({
  chainId: CHAIN,
  tokenIn: registry.baseTokens[i % 2]!.address,
  tokenOut: registry.quoteToken.address,
  fee: String(i * 10),
  userAddress: user,
  amountIn: String(10n ** 18n + BigInt(i)),
  minAmountOut: String(i),
}));

/** Runs `fn` for about `ms` after a warm-up; returns operations per second. */
function rate(fn: (i: number) => void, ms = 2_000): number {
  const warm = Date.now() + 300;
  let i = 0;
  while (Date.now() < warm) fn(i++);
  const start = process.hrtime.bigint();
  const end = Date.now() + ms;
  let n = 0;
  while (Date.now() < end) {
    for (let k = 0; k < 100; k++) fn(n++);
  }
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  return n / seconds;
}

function fmt(n: number): string {
  return Math.round(n).toLocaleString('en-US');
}

async function main(): Promise<void> {
  const url = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
  if (process.env.BENCH_SIGNER_ONLY === 'firm') return benchFirmQuotes(url);
  const signer = createDigestSigner(key);
  const ctx: SignQuoteContext = {
    servedChains: [CHAIN],
    registry: () => registry,
    integrator: integratorView('bench', JSON.stringify(integratorRecord)),
    signer: () => signer,
    originRate: () => 0n,
    validitySeconds: () => 60,
    nowMs: Date.now(),
  };
  const maxFee = 10_000n;

  const inProcess = rate((i) => {
    const parsed = parseSignRequest(bodies[i & 63], { maxFee, allowChainId: true, allowSlippageBps: true });
    signQuote(parsed, ctx);
  });

  const raw = rawSign(signer.backend);
  const keyBytes = hexToBytes(key);
  const digests = Array.from({ length: 64 }, () => new Uint8Array(randomBytes(32)));
  const rawRate = rate((i) => {
    raw(digests[i & 63]!, keyBytes);
  });

  console.log(`secp256k1 backend: ${signer.backend}`);
  console.log(`in-process signing (validate + checks + encode + hash + sign + calldata): ${fmt(inProcess)} /s`);
  console.log(`raw ${signer.backend} ecdsaSign alone:                                  ${fmt(rawRate)} /s`);
  console.log(`ratio in-process / raw: ${(inProcess / rawRate).toFixed(2)} (goal >= 0.50)`);

  // Where the in-process time goes (microseconds per call, each part timed alone).
  const parsed = bodies.map((b) => parseSignRequest(b, { maxFee, allowChainId: true, allowSlippageBps: true }));
  const fields = parsed.map((p) => ({ ...p, timestamp: 1_700_000_000n, originRate: 0n }));
  const signedVd = fields.map((f) => signSwapQuote(signer, f).verificationData);
  const us = (r: number) => (1e6 / r).toFixed(1).padStart(6);
  const parts: [string, (i: number) => void][] = [
    [
      'parseSignRequest (core)',
      (i) => parseSignRequest(bodies[i & 63], { maxFee, allowChainId: true, allowSlippageBps: true }),
    ],
    ['checkSignRequest (signer: chain, registry, pair, whitelist)', (i) => checkSignRequest(parsed[i & 63]!, ctx)],
    ['swapDigest (core: encode + keccak)', (i) => swapDigest(fields[i & 63]!)],
    ['signSwapQuote (core: digest + sign + verificationData)', (i) => signSwapQuote(signer, fields[i & 63]!)],
    [
      'encodeSwapCalldata (core)',
      (i) => {
        const p = parsed[i & 63]!;
        encodeSwapCalldata({
          tokenIn: p.tokenIn,
          amountIn: p.amountIn ?? 1n,
          tokenOut: p.tokenOut,
          minAmountOut: p.minAmountOut,
          quoteTimestamp: 1n,
          verificationData: signedVd[i & 63]!,
        });
      },
    ],
  ];
  console.log(`breakdown (us per call): raw sign ${us(rawRate)}, whole path ${us(inProcess)}`);
  for (const [name, fn] of parts) console.log(`  ${us(rate(fn, 500))}  ${name}`);

  // The body's text as the HTTP layer sees it: JSON.parse, and the duplicate-key check that
  // follows it (http/json-body.ts), each alone, and the check's share of the whole sign path.
  // The check counts colons against keys and scans the text only when that cannot clear it;
  // a colon inside a string value forces the scan, which the second figure measures.
  const texts = bodies.map((b) => JSON.stringify(b));
  const values = texts.map((t) => JSON.parse(t) as unknown);
  const colonTexts = texts.map((t) => t.replace('{', '{"memo":"a:b",'));
  const colonValues = colonTexts.map((t) => JSON.parse(t) as unknown);
  const parseRate = rate((i) => JSON.parse(texts[i & 63]!), 1_000);
  const checkRate = rate((i) => findDuplicateKey(texts[i & 63]!, values[i & 63]), 1_000);
  const scanRate = rate((i) => findDuplicateKey(colonTexts[i & 63]!, colonValues[i & 63]), 1_000);
  console.log(
    `body text (${texts[1]!.length} bytes): JSON.parse ${us(parseRate)} us, findDuplicateKey ${us(checkRate)} us ` +
      `(${((100 * (1e6 / checkRate)) / (1e6 / inProcess)).toFixed(1)}% of the in-process sign path); ` +
      `with a colon in a string (scanned) ${us(scanRate)} us`,
  );

  // ---------------------------------------------------------------- HTTP under load
  const prefix = `pmm-bench-${randomBytes(6).toString('hex')}`;
  const keys = redisKeys(prefix);
  const redis = createRedis(url, { role: 'command', name: 'bench' });
  const subscriber = createRedis(url, { role: 'subscriber', name: 'bench-sub' });
  await Promise.all([redisReady(redis), redisReady(subscriber)]);
  const discard = new Writable({ write: (_chunk, _enc, cb) => cb() });
  const logger = createLogger({ service: 'signer-bench', stream: discard });
  await redis.set(keys.pairs(CHAIN), JSON.stringify(registry));
  await redis.set(keys.integrator('bench'), JSON.stringify(integratorRecord));
  const pairs = new PairRegistryCache({ redis, subscriber, keys, chains: [CHAIN], logger, refreshIntervalMs: 0 });
  await pairs.start();
  const token = randomBytes(16).toString('hex');
  /** Redis's own CPU seconds so far (user + sys), from INFO. */
  const redisCpu = async (): Promise<number> => {
    const info = await redis.info('cpu');
    const read = (name: string) => Number(new RegExp(`${name}:([0-9.]+)`).exec(info)?.[1] ?? NaN);
    return read('used_cpu_user') + read('used_cpu_sys');
  };
  /**
   * CPU time of this thread alone (the app; the load generator runs in a worker), in µs, from
   * Linux's per-thread counters (clock ticks of 10 ms). Unlike wall-clock busy time, it does not
   * grow when other processes take the cores.
   */
  const appCpuUs = (): number => {
    const stat = readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1e6) / 100;
  };
  interface Run {
    rps: number;
    /** CPU time of the signer app's thread per request, µs. */
    appUs: number;
    /** Redis CPU per request, µs (exact only when the Redis serves this benchmark alone). */
    redisUs: number;
  }
  const http = async (
    label: string,
    audit: AuditSink,
    seconds: number,
    opts: { signer?: KeySigner; rate?: number } = {},
  ): Promise<Run> => {
    const app = createApp({
      logger,
      metrics: createMetrics('signer-bench'),
      internalToken: token,
      servedChains: [CHAIN],
      maxFee,
      signers: new Map([[CHAIN, opts.signer ?? signer]]),
      quoteValiditySeconds: new Map([[CHAIN, 60]]),
      originRates: new Map([[CHAIN, 0n]]),
      // No halt: the check is a scan of the active halts, none here.
      references: NO_REFERENCES,
      halts: { current: () => [] },
      // No node here: the firm amount answers at once (npm run bench gateway has the node's round trip).
      firmQuotes: (req) => Promise.resolve({ grossOut: req.amountIn, blockNumber: 1 }),
      pairs,
      integrators: new IntegratorStore({ redis, keys }),
      audit,
      readiness: {},
    });
    const served = await listen(app, 0, '127.0.0.1');
    try {
      const cpu0 = await redisCpu();
      const app0 = appCpuUs();
      // The load comes from a worker thread, so this thread's CPU time is the app's alone.
      const result = await autocannon({
        url: `http://127.0.0.1:${served.port}/v2/swap/sign`,
        method: 'POST',
        connections: 50,
        workers: 1,
        duration: seconds,
        // Paced: this many requests per second in all, whatever the answers' times.
        ...(opts.rate ? { overallRate: opts.rate } : {}),
        headers: { 'content-type': 'application/json', 'x-internal-token': token, 'x-integrator-id': 'bench' },
        // 64 distinct quotes in turn (different fees, so different signatures), as many integrators'
        // requests are: one body repeated would sign the same digest all second long.
        requests: bodies.map((b) => ({ method: 'POST', body: JSON.stringify(b) })),
      });
      const appUs = appCpuUs() - app0;
      const redisSeconds = (await redisCpu()) - cpu0;
      const n = Math.max(1, result.requests.total);
      const run = { rps: result.requests.average, appUs: appUs / n, redisUs: (redisSeconds * 1e6) / n };
      console.log(
        `HTTP POST /v2/swap/sign ${label} (autocannon in a worker, 50 connections${opts.rate ? `, paced ${opts.rate}/s` : ''}, ${seconds} s): ` +
          `${fmt(run.rps)} req/s, p50 ${result.latency.p50} ms, p99 ${result.latency.p99} ms, ` +
          `${result['2xx']} ok, ${result.non2xx} non-2xx, ${result.errors} errors; ` +
          `per request: app ${run.appUs.toFixed(0)} us CPU, Redis ${run.redisUs.toFixed(0)} us CPU`,
      );
      return run;
    } finally {
      await served.close();
    }
  };
  try {
    // As start-signer wires it: a dedicated auto-pipelined connection.
    const auditRedis = createRedis(url, { role: 'command', name: 'bench-audit' });
    await redisReady(auditRedis);
    const trail = new RedisAuditTrail({
      keys,
      retentionMs: 180 * DAY_MS,
      durability: DurableWrites.unconfirmed(auditRedis),
    });
    const none: AuditSink = { record: () => Promise.resolve() };

    // The trail alone: records written per second, 50 at a time (what one signer can record).
    let written = 0;
    const until = Date.now() + 2_000;
    await Promise.all(
      Array.from({ length: 50 }, async (_, k) => {
        while (Date.now() < until) {
          await trail.record(sampleAuditRecord(written++ * 50 + k, { chainId: CHAIN }));
        }
      }),
    );
    console.log(`audit trail writes alone (50 concurrent, 2 s): ${fmt(written / 2)} /s`);

    // The key in a PKCS#11 token beside the key in memory, same run, audit trail on.
    const sessions = DEFAULT_PKCS11_SESSIONS;
    const token = await openTokenKey(sessions);
    if (!token)
      console.log('\nkey backends: SoftHSM2 is not installed (apt-get install softhsm2 opensc); token figures skipped');
    else {
      try {
        await benchKeyBackends(signer, token, sessions);
        for (const rate of [200, 400]) {
          await http('key in memory, paced', trail, 4, { rate });
          await http('key in the token, paced', trail, 4, { rate, signer: token.signer });
        }
        await http('key in memory           ', trail, 4);
        await http('key in the token        ', trail, 4, { signer: token.signer });
      } finally {
        await token.close();
      }
    }

    // Short rounds in pairs, the order alternating, so that a busy phase of a shared machine
    // lands on both sides; medians over the pairs are the figures.
    const runs: { without: Run; with: Run }[] = [];
    for (let round = 0; round < 6; round++) {
      const first = round % 2 === 0;
      const a = first ? await http('without the audit trail', none, 3) : undefined;
      const b = await http('with the audit trail   ', trail, 3);
      const c = a ?? (await http('without the audit trail', none, 3));
      runs.push({ without: c, with: b });
    }
    const median = (xs: number[]) => {
      const v = [...xs].sort((x, y) => x - y);
      return (v[(v.length - 1) >> 1]! + v[v.length >> 1]!) / 2;
    };
    // Redis memory per record: the stream, and today's signature index (every record here is today's).
    const records = await redis.xlen(keys.audit(CHAIN));
    const bytes = async (key: string) => Number(await redis.call('MEMORY', 'USAGE', key, 'SAMPLES', '0'));
    const streamBytes = await bytes(keys.audit(CHAIN));
    const indexBytes = await bytes(keys.auditSignatures(CHAIN, auditDay(Math.floor(Date.now() / 1000))));
    console.log(
      `audit records written: ${fmt(records)}; Redis memory per record: stream ${(streamBytes / records).toFixed(0)} B, ` +
        `signature index ${(indexBytes / records).toFixed(0)} B`,
    );
    auditRedis.disconnect();
    const cost = (r: Run) => r.appUs + r.redisUs;
    const appWithout = median(runs.map((r) => r.without.appUs));
    const appWith = median(runs.map((r) => r.with.appUs));
    const redisWithout = median(runs.map((r) => r.without.redisUs));
    const redisWith = median(runs.map((r) => r.with.redisUs));
    console.log(
      `cost per signature (medians): without the trail app ${appWithout.toFixed(0)} us + Redis ${redisWithout.toFixed(0)} us, ` +
        `with it app ${appWith.toFixed(0)} us + Redis ${redisWith.toFixed(0)} us`,
    );
    console.log(
      `ratio with / without the audit trail: measured throughput ${median(runs.map((r) => r.with.rps / r.without.rps)).toFixed(2)}; ` +
        `CPU capacity (app + Redis per signature) ${median(runs.map((r) => cost(r.without) / cost(r.with))).toFixed(2)} ` +
        `(goal >= 0.90: the trail costs at most 10 %)`,
    );
  } finally {
    await pairs.close();
    // One index key per signature: delete in slices (a spread of 100k arguments overflows the stack).
    const found = await redis.keys(`${prefix}:*`);
    for (let i = 0; i < found.length; i += 1_000) await redis.del(...found.slice(i, i + 1_000));
    await Promise.allSettled([redis.quit(), subscriber.quit()]);
  }
  await benchFirmQuotes(url);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
