/**
 * `npm run bench indexer-cpu`: what one chain costs in CPU, per block, for the capacity plan.
 *
 * The indexers are the production process (services/indexer/dist/main.js, the service V8
 * flags), BENCH_REPLICAS of them (default 2, the failover shape) on one devnet chain (8453,
 * anvil) mining a block every BENCH_BLOCK_INTERVAL_MS (default 2,000, Base's interval), for
 * 10 and 100 pairs (BENCH_PAIRS) with the default ladder. Per row, over BENCH_SAMPLES books
 * (default 30):
 * - each indexer process's CPU seconds (user + system, from /proc: the process's own,
 *   whatever else loads the machine), per book written, and its share of one core;
 * - the same for Redis (INFO cpu: exact only on a Redis that serves this bench alone, as
 *   `npm run bench`'s private one) and for the node (anvil: the EVM running every quote());
 * - each indexer's resident memory at the end of the row;
 * - the chain's Redis memory (MEMORY USAGE of every key under the bench's prefix: the book,
 *   the registry, the BullMQ queue with the jobs it keeps).
 * Before the first row, mining is paused (anvil's evm_setIntervalMining 0) for a few
 * seconds: the indexers' CPU with no block (heartbeats, presence, the queue's own timers), the
 * fixed part of the per-block figure, and Redis's over the same seconds.
 *
 * Books written are counted from the chain's `book-updated` messages (one per write). Linux
 * only (/proc). Ratios: CPU per book at 100 pairs ÷ at 10, and the busiest indexer's share of
 * one core.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { JsonRpcProvider } from 'ethers';
import Redis from 'ioredis';
import { SERVICE_NODE_FLAGS, redisKeys } from '@pmm/core';
import { processCpuSeconds, startSystem } from '@pmm/testkit';
import { BenchPairs } from './bench-pairs';

const PAIR_COUNTS = (process.env.BENCH_PAIRS ?? '10,100').split(',').map(Number);
const BLOCK_INTERVAL_MS = Number(process.env.BENCH_BLOCK_INTERVAL_MS ?? 2_000);
const SAMPLES = Number(process.env.BENCH_SAMPLES ?? 30);
const REPLICAS = Number(process.env.BENCH_REPLICAS ?? 2);
const IDLE_SECONDS = Number(process.env.BENCH_IDLE_SECONDS ?? 6);
/** Enough gas for one call covering hundreds of pairs (the indexer's CALL_GAS, the node's block gas limit). */
const CALL_GAS = 1_000_000_000;
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const ROOT = path.resolve(__dirname, '..', '..', '..');
const CHAIN = 8453;
/** Resident memory of a process, MB (VmRSS from /proc/<pid>/status). */
function residentMb(pid: number): number {
  const kb = Number(/^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? NaN);
  return kb / 1024;
}

/** This process's children named `name` (the devnet's anvil). */
function childrenNamed(name: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (comm === name && ppid === process.pid) found.push(Number(entry));
    } catch {
      // Gone between the listing and the read.
    }
  }
  return found;
}

async function redisCpuSeconds(redis: Redis): Promise<number> {
  const info = await redis.info('cpu');
  const read = (name: string) => Number(new RegExp(`${name}:([0-9.]+)`).exec(info)?.[1] ?? NaN);
  return read('used_cpu_user') + read('used_cpu_sys');
}

/** Bytes Redis holds for every key under `prefix`, and how many keys. */
async function prefixMemory(redis: Redis, prefix: string): Promise<{ bytes: number; keys: number }> {
  let bytes = 0;
  let keys = 0;
  for await (const batch of redis.scanStream({ match: `${prefix}:*`, count: 1000 }) as AsyncIterable<string[]>) {
    for (const key of batch) {
      bytes += Number((await redis.call('MEMORY', 'USAGE', key, 'SAMPLES', '0')) ?? 0);
      keys++;
    }
  }
  return { bytes, keys };
}

interface Indexer {
  child: ChildProcess;
  /** Its operator port (/metrics). */
  port: number;
}

/** Books this indexer wrote so far (its indexer_blocks_total{outcome="written"}). */
async function booksWritten(ix: Indexer): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${ix.port}/metrics`)).text();
  return Number(/^indexer_blocks_total\{[^}]*outcome="written"[^}]*\} (\d+)/m.exec(text)?.[1] ?? 0);
}

/** Starts one indexer process; resolves once it has logged its start. */
function startIndexerProcess(env: Record<string, string>): Promise<Indexer> {
  const child = spawn(process.execPath, [...SERVICE_NODE_FLAGS, path.join(ROOT, 'services/indexer/dist/main.js')], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    let out = '';
    const onData = (d: Buffer) => {
      out += d.toString();
      const line = out.split('\n').find((l) => l.includes('"message":"indexer started"'));
      if (line) {
        // Keep draining its log (a full pipe would stall it), without keeping it.
        child.stdout!.off('data', onData);
        child.stdout!.resume();
        resolve({ child, port: (JSON.parse(line) as { port: number }).port });
      }
    };
    child.stdout!.on('data', onData);
    child.once('exit', (code) => reject(new Error(`indexer exited (${code}):\n${out}`)));
  });
}

function stopProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}

interface Row {
  pairs: number;
  books: number;
  seconds: number;
  /** CPU seconds per book, per indexer process. */
  indexerEach: number[];
  /** Books each indexer process wrote (the jobs are shared). */
  writtenEach: number[];
  /** Each indexer process's resident memory at the end of the row, MB. */
  rssEach: number[];
  redis: number;
  node: number;
  memory: { bytes: number; keys: number };
}

async function main(): Promise<void> {
  // The chain alone: the bench starts its indexers itself, a fresh set per row, on the Redis
  // `npm run bench` gives it (REDIS_URL, which serves this bench alone).
  const sys = await startSystem({
    chains: [CHAIN],
    blockIntervalMs: BLOCK_INTERVAL_MS,
    blockGasLimit: CALL_GAS,
    redisUrl: REDIS_URL,
    services: [],
  });
  const chain = sys.chain(CHAIN);
  const [nodePid] = childrenNamed('anvil');
  const provider = new JsonRpcProvider(chain.rpcUrl, CHAIN, { staticNetwork: true });
  const bench = await BenchPairs.create(chain, Math.max(...PAIR_COUNTS));
  const redis = new Redis(REDIS_URL);
  const subscriber = new Redis(REDIS_URL);
  const children = new Set<ChildProcess>();
  const rows: Row[] = [];
  let idle: number[] | undefined;
  let redisIdle = NaN;
  try {
    for (const pairs of PAIR_COUNTS) {
      await bench.list(pairs);
      const prefix = `bench-ixcpu-${randomUUID().slice(0, 8)}`;
      const keys = redisKeys(prefix);
      const env = {
        CHAIN_ID: String(CHAIN),
        CHAINS: JSON.stringify({
          [CHAIN]: { chainId: CHAIN, rpcUrl: chain.rpcUrl, wsUrl: chain.wsUrl, contracts: chain.contracts },
        }),
        QUOTER_KEY: chain.quoter.privateKey,
        REDIS_URL,
        REDIS_KEY_PREFIX: prefix,
        PORT: '0',
        CALL_GAS: String(CALL_GAS),
        LOG_LEVEL: 'info',
      };
      const started: Indexer[] = [];
      for (let i = 0; i < REPLICAS; i++) {
        const ix = await startIndexerProcess(env);
        children.add(ix.child);
        started.push(ix);
      }
      const indexers = started.map((ix) => ix.child);
      // Counts books as they are written; the first one (the registry's load) is not measured.
      let written = 0;
      let onBook: (() => void) | undefined;
      await subscriber.subscribe(keys.updates(CHAIN));
      subscriber.on('message', (channel: string, message: string) => {
        if (channel !== keys.updates(CHAIN) || !message.includes('"type":"book"')) return;
        written++;
        onBook?.();
      });
      const booksReached = (n: number) =>
        new Promise<void>((resolve) => {
          onBook = () => {
            if (written >= n) resolve();
          };
          onBook();
        });
      await booksReached(1);

      if (idle === undefined) {
        // The fixed part: no block for a few seconds.
        await provider.send('evm_setIntervalMining', [0]);
        const before = indexers.map((c) => processCpuSeconds(c.pid!));
        const redisBefore = await redisCpuSeconds(redis);
        const t0 = Date.now();
        await new Promise((r) => setTimeout(r, IDLE_SECONDS * 1_000));
        const seconds = (Date.now() - t0) / 1_000;
        idle = indexers.map((c, i) => (processCpuSeconds(c.pid!) - before[i]!) / seconds);
        redisIdle = ((await redisCpuSeconds(redis)) - redisBefore) / seconds;
        await provider.send('evm_setIntervalMining', [BLOCK_INTERVAL_MS / 1_000]);
        await booksReached(written + 1);
      }

      const from = written;
      const written0 = await Promise.all(started.map(booksWritten));
      const cpu0 = indexers.map((c) => processCpuSeconds(c.pid!));
      const redis0 = await redisCpuSeconds(redis);
      const node0 = nodePid ? processCpuSeconds(nodePid) : NaN;
      const t0 = Date.now();
      await booksReached(from + SAMPLES);
      const books = written - from;
      const seconds = (Date.now() - t0) / 1_000;
      const indexerEach = indexers.map((c, i) => (processCpuSeconds(c.pid!) - cpu0[i]!) / books);
      const rssEach = indexers.map((c) => residentMb(c.pid!));
      const writtenEach = (await Promise.all(started.map(booksWritten))).map((n, i) => n - written0[i]!);
      const redisPerBook = ((await redisCpuSeconds(redis)) - redis0) / books;
      const nodePerBook = nodePid ? (processCpuSeconds(nodePid) - node0) / books : NaN;
      onBook = undefined;
      subscriber.removeAllListeners('message');
      await subscriber.unsubscribe(keys.updates(CHAIN));
      const memory = await prefixMemory(redis, prefix);
      rows.push({
        pairs,
        books,
        seconds,
        indexerEach,
        writtenEach,
        rssEach,
        redis: redisPerBook,
        node: nodePerBook,
        memory,
      });
      for (const c of indexers) {
        await stopProcess(c);
        children.delete(c);
      }
      for await (const batch of redis.scanStream({ match: `${prefix}:*`, count: 1000 }) as AsyncIterable<string[]>)
        if (batch.length > 0) await redis.del(...batch);
    }
  } finally {
    await Promise.all([...children].map(stopProcess));
    bench.close();
    provider.destroy();
    redis.disconnect();
    subscriber.disconnect();
    await sys.stop();
  }

  const ms = (s: number) => (s * 1e3).toFixed(1);
  console.log(
    `indexer CPU per chain: chain ${CHAIN} on anvil, a block every ${BLOCK_INTERVAL_MS} ms, ${REPLICAS} indexer processes, ` +
      `default ladder (12 asks + 12 bids per pair), ${SAMPLES} books per row; CPU in ms per book written`,
  );
  console.log(
    `with no block (mining paused ${IDLE_SECONDS} s): indexer CPU ${idle!.map((s) => ms(s)).join(' + ')} ms per second ` +
      `(${idle!.map((s) => (100 * s).toFixed(1)).join(' + ')} % of one core); Redis ${ms(redisIdle)} ms per second`,
  );
  console.log(
    'pairs | books | s/book | written by each | indexers (each) ms | indexers sum ms | busiest % core | Redis ms | node ms | Redis keys | Redis KB | RSS MB (each)',
  );
  for (const r of rows) {
    const sum = r.indexerEach.reduce((a, b) => a + b, 0);
    const busiest = Math.max(...r.indexerEach);
    const perSecond = r.books / r.seconds;
    console.log(
      `${String(r.pairs).padStart(5)} | ${String(r.books).padStart(5)} | ${(r.seconds / r.books).toFixed(2).padStart(6)} | ` +
        `${r.writtenEach.join(' + ').padStart(15)} | ` +
        `${r.indexerEach
          .map((s) => ms(s))
          .join(' + ')
          .padStart(18)} | ${ms(sum).padStart(15)} | ${(100 * busiest * perSecond).toFixed(1).padStart(14)} | ` +
        `${ms(r.redis).padStart(8)} | ${ms(r.node).padStart(7)} | ${String(r.memory.keys).padStart(10)} | ${(r.memory.bytes / 1024).toFixed(0).padStart(8)} | ` +
        r.rssEach.map((m) => m.toFixed(0)).join(' + '),
    );
  }
  const [first, last] = [rows[0], rows.at(-1)];
  if (first && last && first !== last) {
    const sum = (r: Row) => r.indexerEach.reduce((a, b) => a + b, 0);
    console.log(
      `ratio ${last.pairs} pairs ÷ ${first.pairs} pairs, CPU per book: indexers ${(sum(last) / sum(first)).toFixed(2)}×, ` +
        `node ${(last.node / first.node).toFixed(2)}×, Redis ${(last.redis / first.redis).toFixed(2)}×`,
    );
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
