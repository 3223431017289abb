/**
 * The firm-quote rows of `npm run bench signer` (docs/decisions/0070-firm-quotes-share-a-flight-and-a-round-trip.md):
 * what a sign with `amountIn` costs the chain's node, and what it adds to a sign.
 *
 * The signer runs as `npm start` runs it (testkit's startSystem: its build, its settings; the
 * tests' REDIS_DURABILITY=none), on the benchmark's Redis under a random prefix, against one
 * devnet chain (8453, anvil, the reference router and its Multicall3). No indexer: this file
 * plays its part, mining a block every BLOCK_MS and publishing it as the served book's head
 * right after (publishBookHead), so every firm quote is pinned to the latest block.
 * 1. Node calls per firm quote: firm signs at an evenly paced 500/s for FIRM_SECONDS (default
 *    10) over keep-alive sockets, the amounts cycling over 20 distinct ones (both sides), at a
 *    block every 2 s (Base's) and every 750 ms (BNB Smart Chain's): the signer's own counters
 *    (`signer_firm_quote_node_calls_total` over the quotes answered, and
 *    `signer_firm_quote_batch_size`) before and after; latency from when each request was due.
 *    Goal ≤ 0.1 node calls per firm quote.
 * 2. One client, one request at a time, no block mined meanwhile: a plain sign; a firm sign
 *    with a new amount each time (never asked in the block: one node call each); a firm sign of
 *    one amount (answered for the block: no node call); and the node's own round trip of the
 *    `quote()` the signer sends (one eth_call pinned to the block's hash, straight to anvil over
 *    node:http, as the other rows' client), and the same eth_call through the signer's own
 *    transport (core's createHttpTransport, node:http), for where the difference goes.
 *    Goal: firm sign p50 ≤ plain sign p50 + the node's p50 + 1 ms.
 */
import { Agent, request } from 'node:http';
import { randomUUID } from 'node:crypto';
import {
  createDigestSigner,
  createHttpTransport,
  createRedis,
  redisKeys,
  redisReady,
  type RedisClient,
} from '@pmm/core';
import { quoteCalldataBuilder, signAmmVerification } from '@pmm/protocol';
import type { ChainStack } from '@pmm/devnet';
import { chainClients, devnetRegistry, publishBookHead, startSystem } from '@pmm/testkit';

const CHAIN = 8453;
const PACED_PER_SECOND = 500;
const DISTINCT_AMOUNTS = 20;
const FIRM_SECONDS = Number(process.env.FIRM_SECONDS ?? 10);
const ONE_CLIENT_REQUESTS = Number(process.env.FIRM_ONE_CLIENT_REQUESTS ?? 1_000);
/** Paced 500/s before each paced row, not counted (a freshly started signer's JIT settles). */
const WARM_SECONDS = Number(process.env.FIRM_WARM_SECONDS ?? 5);

interface Post {
  url: URL;
  headers: Record<string, string>;
  body: string;
}

/** Sends one POST on `agent`; resolves with its status and its answer's text (status 0: no answer). */
function post(agent: Agent, p: Post): Promise<{ status: number; text: string }> {
  return new Promise((resolve) => {
    const req = request(
      p.url,
      {
        method: 'POST',
        agent,
        headers: { ...p.headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(p.body) },
      },
      (res) => {
        let text = '';
        res.on('data', (d: Buffer) => (text += d.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      },
    );
    req.on('error', () => resolve({ status: 0, text: '' }));
    req.end(p.body);
  });
}

const percentile = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
const ms = (v: number) => v.toFixed(2);

interface Latencies {
  p50: number;
  p99: number;
  failures: number;
  count: number;
}

function latencies(values: number[], failures: number): Latencies {
  const sorted = [...values].sort((a, b) => a - b);
  return { p50: percentile(sorted, 0.5), p99: percentile(sorted, 0.99), failures, count: values.length };
}

/** One client, one request at a time: `n` requests, the i-th sent by `send(i)` (true: answered 200). */
async function oneClient(n: number, send: (i: number) => Promise<boolean>): Promise<Latencies> {
  const times: number[] = [];
  let failures = 0;
  // Warm: the socket, and the JIT of both sides.
  for (let i = 0; i < 50; i++) await send(n + i);
  for (let i = 0; i < n; i++) {
    const started = performance.now();
    const ok = await send(i);
    times.push(performance.now() - started);
    if (!ok) failures++;
  }
  return latencies(times, failures);
}

/** The POSTs `make(i)` over one keep-alive socket of node:http (as the client of the rows above). */
function overHttp(make: (i: number) => Post): { send(i: number): Promise<boolean>; close(): void } {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  return {
    send: (i) => post(agent, make(i)).then(({ status }) => status === 200),
    close: () => agent.destroy(),
  };
}

/** `perSecond` requests a second for `seconds`, each sent when due; latency counted from when it was due. */
async function paced(perSecond: number, seconds: number, make: (i: number) => Post): Promise<Latencies> {
  const agent = new Agent({ keepAlive: true, maxSockets: 64 });
  const times: number[] = [];
  const pending: Promise<void>[] = [];
  let failures = 0;
  const start = performance.now();
  const total = perSecond * seconds;
  let sent = 0;
  await new Promise<void>((done) => {
    const timer = setInterval(() => {
      const due = Math.min(total, Math.floor(((performance.now() - start) * perSecond) / 1000));
      for (; sent < due; sent++) {
        const dueAt = start + (sent * 1000) / perSecond;
        pending.push(
          post(agent, make(sent)).then(({ status }) => {
            times.push(performance.now() - dueAt);
            if (status !== 200) failures++;
          }),
        );
      }
      if (sent >= total) {
        clearInterval(timer);
        done();
      }
    }, 1);
  });
  await Promise.all(pending);
  agent.destroy();
  return latencies(times, failures);
}

/** The signer's counters of firm quotes on the chain, from its /metrics. */
async function firmCounters(signerUrl: string) {
  const text = await (await fetch(`${signerUrl}/metrics`)).text();
  const sum = (re: RegExp) => [...text.matchAll(re)].reduce((a, m) => a + Number(m[1]), 0);
  const chain = `chain="${CHAIN}"`;
  return {
    nodeCalls: sum(new RegExp(`^signer_firm_quote_node_calls_total\\{[^}]*${chain}[^}]*\\} (\\S+)$`, 'gm')),
    quotes: sum(new RegExp(`^signer_firm_quotes_total\\{[^}]*${chain}[^}]*\\} (\\S+)$`, 'gm')),
    batchedQuotes: sum(new RegExp(`^signer_firm_quote_batch_size_sum\\{[^}]*${chain}[^}]*\\} (\\S+)$`, 'gm')),
    roundTrips: sum(new RegExp(`^signer_firm_quote_batch_size_count\\{[^}]*${chain}[^}]*\\} (\\S+)$`, 'gm')),
  };
}

/** The chain's blocks as the indexer would serve them: one mined every `blockMs`, its head published at once. */
function miner(chain: ChainStack, redis: RedisClient, prefix: string, blockMs: number): { stop(): Promise<void> } {
  const pub = chainClients(chain).publicClient;
  const keys = redisKeys(prefix);
  let running: Promise<unknown> = Promise.resolve();
  const timer = setInterval(() => {
    running = running
      .then(() => pub.request({ method: 'evm_mine' as never, params: [] as never }))
      .then(() => publishBookHead(redis, keys, chain));
  }, blockMs);
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}

export async function benchFirmQuotes(redisUrl: string): Promise<void> {
  const prefix = `bench-firm-${randomUUID().slice(0, 8)}`;
  const keys = redisKeys(prefix);
  const redis = createRedis(redisUrl, { name: 'bench-firm' });
  await redisReady(redis);
  const integratorId = 'bench-firm';
  const sys = await startSystem({
    chains: [CHAIN],
    blockIntervalMs: 0,
    services: ['signer'],
    redisUrl,
    beforeServices: async ({ chains }) => {
      const c = chains[String(CHAIN)]!;
      await redis.set(keys.pairs(CHAIN), JSON.stringify(devnetRegistry(c)));
      await redis.set(
        keys.integrator(integratorId),
        JSON.stringify({
          id: integratorId,
          name: integratorId,
          whitelist: [c.testUser.address.toLowerCase()],
          chains: [],
          rateLimit: { requests: 0, windowSeconds: 60 },
          dailySignatureQuota: 1_000_000_000,
          disabled: false,
        }),
      );
      await publishBookHead(redis, keys, c);
    },
    env: { signer: { REDIS_KEY_PREFIX: prefix } },
  });
  try {
    const c = sys.chain(CHAIN);
    const unit = 10n ** BigInt(c.quoteToken.decimals);
    const signUrl = new URL(`${sys.signer.url}/v2/swap/sign`);
    const headers = { 'x-internal-token': sys.signer.internalToken, 'x-integrator-id': integratorId };
    const sign = (amountIn?: bigint, side: 'ask' | 'bid' = 'ask'): Post => ({
      url: signUrl,
      headers,
      body: JSON.stringify({
        chainId: CHAIN,
        ...(side === 'ask'
          ? { tokenIn: c.quoteToken.address, tokenOut: c.baseTokens[0]!.address }
          : { tokenIn: c.baseTokens[0]!.address, tokenOut: c.quoteToken.address }),
        fee: '30',
        userAddress: c.testUser.address,
        ...(amountIn === undefined ? {} : { amountIn: String(amountIn), slippageBps: 50 }),
      }),
    });
    // 20 distinct quotes: ten amounts of each side, inside the first tiers.
    const distinct = (i: number): Post => {
      const k = i % DISTINCT_AMOUNTS;
      return k < DISTINCT_AMOUNTS / 2
        ? sign(BigInt(100 + 97 * k) * unit, 'ask')
        : sign(10n ** 16n * BigInt(1 + k), 'bid');
    };

    console.log(
      `\nfirm quotes (signer process from its build, devnet anvil chain ${CHAIN}, Multicall3 ${c.contracts.multicall3}; ` +
        `a block mined and published as the book's head every block interval)`,
    );
    for (const blockMs of (process.env.FIRM_BLOCK_MS ?? '2000,750').split(',').map(Number)) {
      const blocks = miner(c, redis, prefix, blockMs);
      // Warm-up at the same rate (not counted): the JIT and the sockets.
      await paced(PACED_PER_SECOND, WARM_SECONDS, distinct);
      const before = await firmCounters(sys.signer.url);
      const load = await paced(PACED_PER_SECOND, FIRM_SECONDS, distinct);
      const after = await firmCounters(sys.signer.url);
      await blocks.stop();
      const quotes = after.quotes - before.quotes;
      const nodeCalls = after.nodeCalls - before.nodeCalls;
      const trips = after.roundTrips - before.roundTrips;
      const perQuote = nodeCalls / Math.max(1, quotes);
      console.log(
        `  paced ${PACED_PER_SECOND}/s firm signs, ${DISTINCT_AMOUNTS} distinct amounts, a block every ${blockMs} ms, ${FIRM_SECONDS} s: ` +
          `${load.count - load.failures} answered 200, ${load.failures} not; firm quotes ${quotes}, node eth_calls ${nodeCalls}, ` +
          `round trips ${trips} (${((after.batchedQuotes - before.batchedQuotes) / Math.max(1, trips)).toFixed(2)} quotes each); ` +
          `node calls per firm quote ${perQuote.toFixed(4)} (goal ≤ 0.1: ${perQuote <= 0.1 ? 'met' : 'NOT met'}); ` +
          `p50 ${ms(load.p50)} ms, p99 ${ms(load.p99)} ms from when due`,
      );
    }

    // One client; no block mined meanwhile: the book's head is the latest block.
    const head = await publishBookHead(redis, keys, c);
    const timestampInMilisec = BigInt(head.timestamp) * 1000n;
    const [tokenIn, tokenOut] = [c.quoteToken.address, c.baseTokens[0]!.address];
    const signature = signAmmVerification(createDigestSigner(c.quoter.privateKey), {
      chainId: CHAIN,
      verifier: c.contracts.verifier,
      tokenIn,
      tokenOut,
      timestampInMilisec,
    });
    const quoteCall = quoteCalldataBuilder({ tokenIn, tokenOut, timestampInMilisec, signature });
    const nodeQuote = (i: number): Post => ({
      url: new URL(c.rpcUrl),
      headers: {},
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: i,
        method: 'eth_call',
        params: [
          { to: c.contracts.router, data: quoteCall(2_000n * unit + BigInt(i)) },
          { blockHash: head.hash, requireCanonical: true },
        ],
      }),
    });
    // The same eth_call through the signer's own transport (core's, as firm-quote-chains.ts opens it).
    const transport = createHttpTransport(c.rpcUrl, { maxAnswerBytes: 64 * 1024, onDropped: () => undefined });
    const viaTransport = (i: number) =>
      transport.request('eth_call', (JSON.parse(nodeQuote(i).body) as { params: unknown[] }).params, 5_000).then(
        () => true,
        () => false,
      );
    let fresh = 0n;
    const rows: [string, Latencies][] = [];
    const timed = async (name: string, make: (i: number) => Post) => {
      const client = overHttp(make);
      rows.push([name, await oneClient(ONE_CLIENT_REQUESTS, client.send)]);
      client.close();
    };
    // Alternated twice, so that a busy phase of a shared machine lands on every case.
    for (let round = 0; round < 2; round++) {
      await timed('plain sign', () => sign());
      await timed('firm sign, a new amount each (a node call each)', () => sign(3_000n * unit + fresh++));
      await timed('firm sign, one amount (answered for the block)', () => sign(1_500n * unit));
      await timed("node's quote() round trip (eth_call at the hash)", nodeQuote);
      rows.push([
        "the same eth_call through the signer's transport",
        await oneClient(ONE_CLIENT_REQUESTS, viaTransport),
      ]);
    }
    transport.close();
    console.log(`  one client, one request at a time, ${ONE_CLIENT_REQUESTS} requests a case, two rounds (ms):`);
    for (const [name, l] of rows)
      console.log(
        `    ${name.padEnd(52)} p50 ${ms(l.p50).padStart(6)}  p99 ${ms(l.p99).padStart(7)}  (${l.failures} not 200)`,
      );
    const meanP50 = (name: string) => {
      const v = rows.filter(([n]) => n === name).map(([, l]) => l.p50);
      return v.reduce((a, b) => a + b, 0) / v.length;
    };
    const plain = meanP50('plain sign');
    const firm = meanP50('firm sign, a new amount each (a node call each)');
    const node = meanP50("node's quote() round trip (eth_call at the hash)");
    console.log(
      `  firm sign p50 ${ms(firm)} ms vs plain sign p50 ${ms(plain)} + node quote() p50 ${ms(node)} + 1 = ${ms(plain + node + 1)} ms ` +
        `(means of the two rounds): goal ${firm <= plain + node + 1 ? 'met' : 'NOT met'}`,
    );
  } finally {
    await sys.stop();
    const left = await redis.keys(`${prefix}:*`);
    for (let i = 0; i < left.length; i += 1_000) await redis.del(...left.slice(i, i + 1_000));
    redis.disconnect();
  }
}
