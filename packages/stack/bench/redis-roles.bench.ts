/**
 * `npm run bench redis-roles`: what the two Redis roles buy (core's redis-roles.ts;
 * docs/decisions/0026-only-the-records-pay-for-durability-two-redis-roles.md), on the stack as
 * `npm start` runs it: the three devnet chains at their block times with the market moving, an
 * indexer and a ledger per chain, the signer and the gateway (testkit's startSystem), the signer
 * and the ledgers confirming durable writes as shipped (REDIS_DURABILITY=auto: fsync on one node).
 *
 * Two configurations, alternated (BENCH_ROUNDS rounds, default 1), each on fresh private Redis:
 * - `one server`: every key on one Redis with `appendfsync always` (before the split; every
 *   deployment that leaves REDIS_RECORDS_URL empty);
 * - `two servers`: the records on a Redis with `appendfsync always`, the rest on one with
 *   `appendfsync everysec` (what `npm start` now runs: STACK_REDIS_PERSISTENCE and
 *   STACK_REBUILDABLE_REDIS_PERSISTENCE).
 * Rows of each (BENCH_SECONDS each, default 5), beside a bare node:http POST twin answering a
 * signed quote's bytes in a process of its own, measured in the same round:
 * - one keep-alive client signing for an integrator whose limit is reserved in batches;
 * - an evenly paced 50 signs/s for an integrator with an exact limit under 100 a window (90 a
 *   second): the gateway reserves each request in Redis before forwarding it, a write on the
 *   sign's path (limits of 100 and more are reserved one request ahead, off it);
 * - the Redis CPU of each server per second of the row (INFO cpu), and its fsyncs' cost shows
 *   in the latency rows.
 * Figures are this machine's; the ratios to the bare twin of the same round are what compare.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  STACK_REBUILDABLE_REDIS_PERSISTENCE,
  STACK_REDIS_PERSISTENCE,
  DEFAULT_KEY_PREFIX,
  closeRedis,
  createRedis,
  redisReady,
  type RedisClient,
} from '@pmm/core';
import { DEFAULT_MARKET } from '@pmm/devnet';
import { ApiKeyStore } from '@pmm/gateway';
import { privateRedis, startSystem, until, type PrivateRedis, type System } from '@pmm/testkit';
import { closedLoop, openLoop, type LatencyFigures, type LoadRequest } from '../../../services/gateway/bench/open-loop';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 1);
const CHAIN = 8453;

type Configuration = 'one server' | 'two servers';
type RowName = 'bare one-client' | 'sign one-client' | 'bare paced-50' | 'exact limit paced-50';
interface Row {
  latency: LatencyFigures;
  /** Redis CPU ms per second of the row, records' server then the other (one figure on one server). */
  redisCpuMsPerSecond: number[];
}

/** The bare twin: answers every POST with the same bytes, in a process of its own (`serve-bare <base64>`). */
function serveBare(base64: string): void {
  const body = Buffer.from(base64, 'base64');
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': body.length });
      res.end(body);
    });
  });
  server.listen(0, '127.0.0.1', () => {
    const address = server.address();
    process.send?.({ port: typeof address === 'object' && address ? address.port : 0 });
  });
}

async function startBare(body: Buffer): Promise<{ child: ChildProcess; port: number }> {
  const child = fork(__filename, ['serve-bare', body.toString('base64')], {
    execArgv: ['-r', path.join(__dirname, '../../../scripts/lib/ts-register.cjs')],
  });
  const port = await new Promise<number>((resolve) => child.once('message', (m: { port: number }) => resolve(m.port)));
  return { child, port };
}

async function redisCpuSeconds(client: RedisClient): Promise<number> {
  const info = String(await client.call('INFO', 'cpu'));
  const field = (name: string) => Number(info.match(new RegExp(`^${name}:([\\d.]+)`, 'm'))?.[1] ?? 0);
  return field('used_cpu_sys') + field('used_cpu_user');
}

interface Started {
  system: System;
  servers: PrivateRedis[];
  /** One admin connection per server, records' first. */
  admins: RedisClient[];
  dirs: string[];
  keys: { batched: string; exact: string };
}

async function startConfiguration(configuration: Configuration): Promise<Started> {
  const dirs: string[] = [];
  const server = async (persistence: readonly string[]) => {
    const dir = mkdtempSync(path.join(tmpdir(), 'bench-roles-'));
    dirs.push(dir);
    return privateRedis({ dir, args: [...persistence] });
  };
  const servers =
    configuration === 'one server'
      ? [await server(STACK_REDIS_PERSISTENCE)]
      : [await server(STACK_REDIS_PERSISTENCE), await server(STACK_REBUILDABLE_REDIS_PERSISTENCE)];
  const admins = servers.map((s) => createRedis(s.url, { name: 'bench-roles' }));
  await Promise.all(admins.map((a) => redisReady(a)));
  // The integrators and their keys, written as the key CLI writes them (the records' server).
  const store = new ApiKeyStore(admins[0]!, DEFAULT_KEY_PREFIX);
  const keys = { batched: '', exact: '' };
  const system = await startSystem({
    chains: [8453, 56, 4663],
    services: ['indexer', 'ledger', 'signer', 'gateway'],
    market: DEFAULT_MARKET,
    redisUrl: servers[servers.length - 1]!.url,
    ...(servers.length === 2 ? { redisRecordsUrl: servers[0]!.url } : {}),
    beforeServices: async ({ chains }) => {
      const whitelist = [chains[String(CHAIN)]!.testUser.address.toLowerCase()];
      for (const [id, rateLimit] of [
        ['batched', { requests: 1_000_000_000, windowSeconds: 60 }],
        ['exact', { requests: 90, windowSeconds: 1 }],
      ] as const) {
        await store.putIntegrator({
          id,
          name: id,
          whitelist,
          chains: [],
          rateLimit,
          dailySignatureQuota: 1_000_000_000,
          disabled: false,
        });
        keys[id] = (await store.issueKey(id)).apiKey;
      }
    },
    env: {
      // As npm start runs them: durable writes confirmed (startSystem's tests turn it off).
      signer: { REDIS_DURABILITY: 'auto' },
      ledger: { REDIS_DURABILITY: 'auto' },
    },
  });
  return { system, servers, admins, dirs, keys };
}

async function stopConfiguration(s: Started): Promise<void> {
  await s.system.stop();
  await Promise.all(s.admins.map((a) => closeRedis(a)));
  await Promise.all(s.servers.map((r) => r.stop()));
  for (const dir of s.dirs) rmSync(dir, { recursive: true, force: true });
}

function signBody(system: System): string {
  const chain = system.chain(CHAIN);
  return JSON.stringify({
    chainId: CHAIN,
    tokenIn: chain.quoteToken.address,
    tokenOut: chain.baseTokens[0]!.address,
    fee: '10',
    userAddress: chain.testUser.address,
  });
}

async function measure(configuration: Configuration): Promise<Record<RowName, Row>> {
  const started = await startConfiguration(configuration);
  let bare: { child: ChildProcess; port: number } | undefined;
  try {
    const { system, admins, keys } = started;
    const body = signBody(system);
    const sign = (key: string): LoadRequest => ({
      url: `${system.gateway.url}/v2/swap/sign`,
      method: 'POST',
      headers: { 'x-api-key': key, 'content-type': 'application/json' },
      body,
    });
    // Signing once the indexers have written the registries.
    let signed: Buffer | undefined;
    await until(
      async () => {
        const { url, method, headers, body: text } = sign(keys.batched);
        // Not up yet, or not signing yet (no registry): asked again.
        const res = await fetch(url, { method, headers, body: text }).catch(() => undefined);
        if (res?.status !== 200) return false;
        signed = Buffer.from(await res.arrayBuffer());
        return true;
      },
      60_000,
      'the first signed quote',
      250,
    );
    bare = await startBare(signed!);
    const barePost: LoadRequest = { ...sign(keys.batched), url: `http://127.0.0.1:${bare.port}/` };
    const rows = {} as Record<RowName, Row>;
    const run = async (name: RowName, load: () => Promise<LatencyFigures>) => {
      const cpu0 = await Promise.all(admins.map(redisCpuSeconds));
      const t0 = performance.now();
      const latency = await load();
      const seconds = (performance.now() - t0) / 1000;
      const cpu1 = await Promise.all(admins.map(redisCpuSeconds));
      rows[name] = { latency, redisCpuMsPerSecond: cpu1.map((c, i) => ((c - cpu0[i]!) * 1000) / seconds) };
    };
    await run('bare one-client', () => closedLoop(barePost, SECONDS));
    await run('sign one-client', () => closedLoop(sign(keys.batched), SECONDS));
    await run('bare paced-50', () => openLoop(barePost, 50, SECONDS));
    await run('exact limit paced-50', () => openLoop(sign(keys.exact), 50, SECONDS));
    return rows;
  } finally {
    bare?.child.kill();
    await stopConfiguration(started);
  }
}

const ms = (v: number) => v.toFixed(2).padStart(7);

async function main(): Promise<void> {
  if (process.argv[2] === 'serve-bare') return serveBare(process.argv[3]!);
  const results: { configuration: Configuration; rows: Record<RowName, Row> }[] = [];
  for (let round = 0; round < ROUNDS; round++)
    for (const configuration of ['one server', 'two servers'] as const)
      results.push({ configuration, rows: await measure(configuration) });

  console.log(
    `${SECONDS} s per row; latency in ms; × = the ratio to the bare POST twin of the same round and load; Redis CPU = ms per second of the row (records' server, then the other's)`,
  );
  console.log('configuration   row                        p50      p99   p50×twin  p99×twin  failures  Redis CPU ms/s');
  for (const { configuration, rows } of results) {
    for (const [name, twin] of [
      ['sign one-client', 'bare one-client'],
      ['exact limit paced-50', 'bare paced-50'],
    ] as const) {
      const { latency, redisCpuMsPerSecond } = rows[name];
      const bare = rows[twin].latency;
      console.log(
        `${configuration.padEnd(15)} ${name.padEnd(22)} ${ms(latency.p50)}  ${ms(latency.p99)}  ${(latency.p50 / bare.p50).toFixed(1).padStart(7)}×  ${(latency.p99 / bare.p99).toFixed(1).padStart(7)}×  ${String(latency.failures).padStart(8)}  ${redisCpuMsPerSecond.map((c) => c.toFixed(1)).join(' / ')}`,
      );
    }
  }
  const p50 = (c: Configuration, row: RowName) =>
    results.filter((r) => r.configuration === c).map((r) => r.rows[row].latency.p50);
  for (const row of ['sign one-client', 'exact limit paced-50'] as const) {
    const one = p50('one server', row);
    const two = p50('two servers', row);
    console.log(
      `${row}: p50 two servers − one server, per round: ${two.map((t, i) => `${(t - one[i]!).toFixed(2)} ms`).join(', ')}`,
    );
  }
}

main().then(
  () => {
    if (process.argv[2] !== 'serve-bare') process.exit(0);
  },
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
