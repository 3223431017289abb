/**
 * `npm run bench stream`: 1,000 concurrent `/v2/price/stream` subscribers on one gateway.
 *
 * - The gateway is the production process (services/gateway/dist/main.js, the service V8
 *   flags), on this machine's Redis (REDIS_URL, else the private one `npm run bench` starts).
 * - Books are written with the indexer's own book store (the same Lua write-and-publish the
 *   indexer runs on every block), a realistic body (3 pairs × 20 levels per side, about
 *   5 KB), every BENCH_BLOCK_MS (default 500 ms) for BENCH_SECONDS (default 20 s).
 * - The subscribers are real HTTP/1.1 requests through the gateway, on raw TCP sockets, split
 *   over BENCH_CLIENT_PROCESSES child processes (default 2), so that the load generator does
 *   not share an event loop with the gateway or with the clock of the writes.
 *
 * How arrival is measured. A subscriber's arrival time is taken first thing in the socket's
 * read callback (`onread`: node hands over the bytes the kernel has for that socket, without
 * a stream, an event or an allocation per read), and it is the time of the read that holds
 * the event's `id:` line (the event's first bytes; an id cut between two reads counts at the
 * second, later one). The callback only scans for that line; nothing is decoded. The
 * subscribers of one process are still read one after another, so a slow client adds its
 * own queueing to what it measures: the processes' CPU per book, and the part spent in the
 * read callbacks, are printed so that this share is visible, not hidden.
 *
 * Prints the delay from the book's write in Redis (the moment the write is sent) to its arrival
 * at each subscriber: p50, p99 and max over every (book, subscriber) pair, the deliveries
 * missing, and the gateway's CPU (share of one core over the run, and per book) and resident
 * memory, idle and with the subscribers, read from its own /metrics. Then where the time goes:
 * the first subscriber's delay (pub/sub notice, the book's read, one write), the spread from
 * the first subscriber to the last, the gateway's own time to write a book to every socket
 * (gateway_stream_fanout_seconds) and the subscriber processes' CPU. Goal: p99 under 50 ms.
 *
 * The figures share the machine with everything else on it (two cores here): compare runs
 * back to back, and prefer the CPU figures when the machine is busy.
 */
import { fork, spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { request } from 'node:http';
import { connect, type Socket } from 'node:net';
import { cpus, loadavg } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { SERVICE_NODE_FLAGS, createRedis, redisKeys, redisReady } from '@pmm/core';
import { ApiKeyStore } from '@pmm/gateway';
import { createBookStore } from '@pmm/indexer';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const SUBSCRIBERS = Number(process.env.BENCH_SUBSCRIBERS ?? 1_000);
const CLIENT_PROCESSES = Number(process.env.BENCH_CLIENT_PROCESSES ?? 2);
const BLOCK_MS = Number(process.env.BENCH_BLOCK_MS ?? 500);
const DURATION_S = Number(process.env.BENCH_SECONDS ?? 20);
const ROOT = path.resolve(__dirname, '..', '..', '..');
const CHAIN = 8453;
const ID_MARKER = Buffer.from('\nid: ');
/** Longest `\nid: <n>\n` line (a block number has at most 16 digits). */
const ID_LINE_MAX = ID_MARKER.length + 17;

/** Wall-clock milliseconds with sub-millisecond resolution, comparable across processes. */
const wallMs = () => performance.timeOrigin + performance.now();

function bookBody(blockNumber: number): string {
  const levels = (sign: number) =>
    Array.from({ length: 20 }, (_, i) => ({
      price: (3000 + sign * (0.5 + i * 1.25)).toFixed(12),
      amount: (0.125 * (i + 1)).toFixed(18),
    }));
  const pairs = [1, 2, 3].map((n) => ({
    baseToken: `0x${String(n).repeat(40)}`,
    quoteToken: '0x833589fcd6edb6e08f4c7c32d4f71b54bda02913',
    bids: levels(-1),
    asks: levels(1),
  }));
  return JSON.stringify({ chainId: CHAIN, blockNumber, blockTime: Math.floor(Date.now() / 1000), pairs });
}

// ---------------------------------------------------------------- child: subscribers
interface ClientReport {
  /** [blockNumber, arrival wall ms] per received book event, for every stream. */
  arrivals: [number, number][];
  /** CPU (user + system, ms) the process spent from its ready message to its report. */
  cpuMs: number;
  /** Time spent inside the read callbacks over the same span (ms). */
  callbackMs: number;
  opened: number;
  failed: number;
}

/** One subscriber's scan of its byte stream for `\nid: <n>\n`, across reads. */
class IdScanner {
  /** The last bytes of the previous read, when an id line may straddle two reads. */
  private tail = Buffer.alloc(0);

  /** Calls `found` with each complete id in `bytes` (which the caller may reuse afterwards). */
  scan(bytes: Buffer, found: (id: number) => void): void {
    // The few bytes before this read and the start of it: an id line cut in two by the reads.
    if (this.tail.length > 0) {
      const joint = Buffer.concat([this.tail, bytes.subarray(0, ID_LINE_MAX)]);
      const at = joint.indexOf(ID_MARKER);
      const eol = at === -1 ? -1 : joint.indexOf(10, at + ID_MARKER.length);
      if (eol !== -1 && at < this.tail.length) found(Number(joint.toString('latin1', at + ID_MARKER.length, eol)));
    }
    let from = 0;
    let done = 0;
    for (;;) {
      const at = bytes.indexOf(ID_MARKER, from);
      if (at === -1) break;
      const eol = bytes.indexOf(10, at + ID_MARKER.length);
      if (eol === -1) break;
      found(Number(bytes.toString('latin1', at + ID_MARKER.length, eol)));
      from = done = eol + 1;
    }
    // Keep only what may begin an id line completed by the next read (a copy: the read buffer is reused).
    this.tail = Buffer.from(bytes.subarray(Math.max(done, bytes.length - ID_LINE_MAX)));
  }
}

async function clients(base: string, apiKey: string, count: number): Promise<void> {
  const { hostname, port } = new URL(base);
  const head = Buffer.from(
    `GET /v2/price/stream?chainId=${CHAIN} HTTP/1.1\r\nHost: ${hostname}:${port}\r\n` +
      `X-API-KEY: ${apiKey}\r\nAccept: text/event-stream\r\n\r\n`,
  );
  const arrivals: [number, number][] = [];
  const sockets: Socket[] = [];
  let opened = 0;
  let failed = 0;
  let firstBooks = 0;
  let readySent = false;
  let cpuAtReady = process.cpuUsage();
  let callbackMs = 0;
  // Ready once every stream has its first book (or failed).
  const checkReady = () => {
    if (readySent || firstBooks + failed < count) return;
    readySent = true;
    cpuAtReady = process.cpuUsage();
    callbackMs = 0;
    process.send!({ ready: true, opened, failed });
  };
  // One read buffer for every socket of the process: each read is consumed before the next.
  const readBuffer = Buffer.alloc(64 * 1024);
  for (let i = 0; i < count; i++) {
    let status: boolean | undefined;
    let first = true;
    const scanner = new IdScanner();
    const socket = connect({
      port: Number(port),
      host: hostname,
      onread: {
        buffer: readBuffer,
        callback: (nread: number, buf: Buffer) => {
          const t = wallMs();
          const bytes = buf.subarray(0, nread);
          if (status === undefined) {
            status = bytes.subarray(0, 12).toString('latin1') === 'HTTP/1.1 200';
            if (status) opened++;
            else {
              failed++;
              socket.destroy();
              checkReady();
              return false;
            }
          }
          scanner.scan(bytes, (id) => {
            if (!first) return void arrivals.push([id, t]);
            first = false;
            firstBooks++;
            checkReady();
          });
          callbackMs += wallMs() - t;
          return true;
        },
      },
    });
    sockets.push(socket);
    socket.on('connect', () => socket.write(head));
    socket.on('error', () => {
      if (status === undefined) {
        status = false;
        failed++;
        checkReady();
      }
    });
  }
  process.on('message', (m) => {
    if (m !== 'report') return;
    const cpu = process.cpuUsage(cpuAtReady);
    const report: ClientReport = { arrivals, cpuMs: (cpu.user + cpu.system) / 1e3, callbackMs, opened, failed };
    process.send!(report, () => {
      for (const socket of sockets) socket.destroy();
      process.exit(0);
    });
  });
}

// ---------------------------------------------------------------- parent
async function scrape(opsBase: string): Promise<Record<string, number>> {
  const text = await new Promise<string>((resolve, reject) => {
    request(`${opsBase}/metrics`, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve(body));
    })
      .on('error', reject)
      .end();
  });
  // `name{labels} value`, keyed without the service label: `name` or `name{event="book"}`.
  const out: Record<string, number> = {};
  for (const line of text.split('\n')) {
    if (line.startsWith('#') || line === '') continue;
    const space = line.lastIndexOf(' ');
    const m = /^([^{]+)(?:\{(.*)\})?$/.exec(line.slice(0, space));
    if (!m) continue;
    const labels = (m[2] ?? '')
      .split(',')
      .filter((l) => l !== '' && !l.startsWith('service='))
      .join(',');
    out[labels ? `${m[1]}{${labels}}` : m[1]!] = Number(line.slice(space + 1));
  }
  return out;
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

async function main(): Promise<void> {
  if (process.argv[2] === 'clients') return clients(process.argv[3]!, process.argv[4]!, Number(process.argv[5]));

  const prefix = `bench-${randomUUID().slice(0, 8)}`;
  const keys = redisKeys(prefix);
  const redis = createRedis(REDIS_URL, { name: 'bench-stream' });
  await redisReady(redis);
  const store = new ApiKeyStore(redis, prefix);
  await store.putIntegrator({
    id: 'bench',
    name: 'bench',
    whitelist: [],
    chains: [],
    rateLimit: { requests: 1_000_000, windowSeconds: 60 },
    disabled: false,
  });
  const { apiKey } = await store.issueKey('bench');
  const books = createBookStore(redis, {
    keys: { book: keys.book(CHAIN), updates: keys.updates(CHAIN) },
    chainId: CHAIN,
    ttlMs: 60_000,
  });
  let block = 1_000;
  await books.write(block, bookBody(block));

  const gateway: ChildProcess = spawn(
    process.execPath,
    [...SERVICE_NODE_FLAGS, path.join(ROOT, 'services/gateway/dist/main.js')],
    {
      cwd: ROOT,
      env: {
        PATH: process.env.PATH ?? '',
        REDIS_URL,
        REDIS_KEY_PREFIX: prefix,
        INTERNAL_TOKEN: `bench-${randomUUID()}`,
        PORT: '0',
        OPS_PORT: '0',
        SERVED_CHAINS: String(CHAIN),
        STREAMS_PER_KEY: String(SUBSCRIBERS * 2),
        LOG_LEVEL: 'info',
      },
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  const { port, opsPort } = await new Promise<{ port: number; opsPort: number }>((resolve, reject) => {
    let out = '';
    gateway.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const line = out.split('\n').find((l) => l.includes('"message":"gateway listening"'));
      if (line) resolve(JSON.parse(line) as { port: number; opsPort: number });
    });
    gateway.once('exit', (code) => reject(new Error(`gateway exited (${code}):\n${out}`)));
  });
  const base = `http://127.0.0.1:${port}`;
  const opsBase = `http://127.0.0.1:${opsPort}`;
  const idle = await scrape(opsBase);

  // Subscribers: connect, wait until each has its first book.
  const per = Math.ceil(SUBSCRIBERS / CLIENT_PROCESSES);
  const children: ChildProcess[] = [];
  const ready: Promise<void>[] = [];
  let opened = 0;
  let failed = 0;
  const connectStart = Date.now();
  for (let i = 0; i < CLIENT_PROCESSES; i++) {
    const n = Math.min(per, SUBSCRIBERS - i * per);
    const child = fork(__filename, ['clients', base, apiKey, String(n)], {
      execArgv: ['-r', path.join(ROOT, 'scripts/lib/ts-register.cjs')],
    });
    children.push(child);
    ready.push(
      new Promise<void>((resolve) => {
        child.on('message', (m: { ready?: boolean; opened?: number; failed?: number }) => {
          if (!m.ready) return;
          opened += m.opened ?? 0;
          failed += m.failed ?? 0;
          resolve();
        });
      }),
    );
  }
  await Promise.all(ready);
  const connectMs = Date.now() - connectStart;
  const connected = await scrape(opsBase);

  // The run: a book every BLOCK_MS, its write time recorded as the write is sent.
  const written = new Map<number, number>();
  const end = Date.now() + DURATION_S * 1_000;
  while (Date.now() < end) {
    block++;
    const body = bookBody(block);
    written.set(block, wallMs());
    await books.write(block, body);
    await new Promise((r) => setTimeout(r, BLOCK_MS));
  }
  await new Promise((r) => setTimeout(r, 1_000));
  const after = await scrape(opsBase);

  const reports = await Promise.all(
    children.map(
      (child) =>
        new Promise<ClientReport>((resolve) => {
          child.on('message', (m: Partial<ClientReport>) => {
            if (m.arrivals) resolve(m as ClientReport);
          });
          child.send('report');
        }),
    ),
  );
  const gatewayExited = new Promise((r) => gateway.once('exit', r));
  gateway.kill('SIGTERM');
  const delays: number[] = [];
  for (const r of reports) for (const [id, t] of r.arrivals) delays.push(t - written.get(id)!);
  delays.sort((a, b) => a - b);
  // Per book: the first subscriber's delay (notice, read, first write) and the spread to the last.
  const perBook = new Map<number, { min: number; max: number }>();
  for (const r of reports)
    for (const [id, t] of r.arrivals) {
      const d = t - written.get(id)!;
      const b = perBook.get(id);
      if (!b) perBook.set(id, { min: d, max: d });
      else {
        b.min = Math.min(b.min, d);
        b.max = Math.max(b.max, d);
      }
    }
  const firsts = [...perBook.values()].map((b) => b.min).sort((a, b) => a - b);
  const spreads = [...perBook.values()].map((b) => b.max - b.min).sort((a, b) => a - b);
  const expected = opened * written.size;

  const cpuSeconds = (m: Record<string, number>) => m.process_cpu_seconds_total ?? 0;
  const rssMb = (m: Record<string, number>) => (m.process_resident_memory_bytes ?? 0) / 2 ** 20;
  const heapMb = (m: Record<string, number>) => (m.nodejs_heap_size_used_bytes ?? 0) / 2 ** 20;
  const runSeconds = DURATION_S + 1;
  console.log(
    `\n${opened} subscribers open (${failed} refused or failed), connected and served their first book in ${connectMs} ms`,
  );
  console.log(
    `${written.size} books written (every ${BLOCK_MS} ms for ${DURATION_S} s), ${delays.length} of ${expected} deliveries received (${expected - delays.length} skipped or missing)`,
  );
  console.log(
    `delay write in Redis → arrival at the subscriber: p50 ${percentile(delays, 50).toFixed(1)} ms, p99 ${percentile(delays, 99).toFixed(1)} ms, max ${delays.at(-1)!.toFixed(1)} ms`,
  );
  console.log(
    `gateway CPU over the run: ${((100 * (cpuSeconds(after) - cpuSeconds(connected))) / runSeconds).toFixed(1)}% of one core; ` +
      `RSS ${rssMb(idle).toFixed(0)} MB idle → ${rssMb(connected).toFixed(0)} MB with the subscribers → ${rssMb(after).toFixed(0)} MB after the run; ` +
      `heap used ${heapMb(idle).toFixed(0)} → ${heapMb(after).toFixed(0)} MB`,
  );
  console.log(
    `gateway CPU per book (everything the gateway did during the run, over the books written): ${(
      (1e3 * (cpuSeconds(after) - cpuSeconds(connected))) /
      written.size
    ).toFixed(1)} ms`,
  );
  console.log(
    `gateway /metrics: gateway_stream_events_total{event="book"} = ${after['gateway_stream_events_total{event="book"}'] ?? 'n/a'}`,
  );
  console.log(
    `per book: first subscriber p50 ${percentile(firsts, 50).toFixed(1)} ms; first → last subscriber p50 ${percentile(spreads, 50).toFixed(1)} ms, max ${spreads.at(-1)!.toFixed(1)} ms`,
  );
  const clientCpu = reports.map((r) => r.cpuMs / written.size);
  const clientCallbacks = reports.map((r) => r.callbackMs / written.size);
  console.log(
    `subscriber processes per book: CPU ${clientCpu.map((c) => c.toFixed(1)).join(' + ')} ms, ` +
      `of which in their read callbacks ${clientCallbacks.map((c) => c.toFixed(1)).join(' + ')} ms`,
  );
  // The histogram is labelled by chain.
  const fan = (m: Record<string, number>, part: 'sum' | 'count') =>
    m[`gateway_stream_fanout_seconds_${part}{chain="${CHAIN}"}`] ?? 0;
  const fanSum = fan(after, 'sum') - fan(connected, 'sum');
  const fanCount = fan(after, 'count') - fan(connected, 'count');
  console.log(
    `gateway time to write one book to all streams (gateway_stream_fanout_seconds): mean ${((1e3 * fanSum) / Math.max(1, fanCount)).toFixed(1)} ms over ${fanCount} books`,
  );
  console.log(
    `machine: ${cpus().length} cores, load average ${loadavg()
      .map((l) => l.toFixed(1))
      .join(' / ')} (1/5/15 min) at the end`,
  );
  const p99 = percentile(delays, 99);
  console.log(
    `goal p99 < 50 ms with ${SUBSCRIBERS} subscribers: ${p99 < 50 && opened === SUBSCRIBERS ? 'met' : 'NOT met'}`,
  );

  await gatewayExited;
  const all = await redis.keys(`${prefix}:*`);
  if (all.length > 0) await redis.del(...all);
  redis.disconnect();
  process.exit(0);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
