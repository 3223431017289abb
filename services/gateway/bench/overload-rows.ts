/**
 * `npm run bench gateway`'s rows past capacity (issue 50; docs/decisions/0071-past-capacity-a-fast-no.md):
 * firm quotes (signs with `amountIn`, each a different amount: a quote() of its own at the node)
 * through a gateway and its signer, side by side for each system the bench runs:
 * - evenly paced at 500/s: the share answered 200 and their p99 (goal ≥ 99 %, ≤ 100 ms);
 * - the knee: testkit's KNEE_CLIENTS clients, each sending its next sign when the last is
 *   answered: the signs per second answered 200;
 * - evenly paced at twice the knee: every answer's p99 (goal ≤ the sign's deadline) and the 200s
 *   per second (goal ≥ 90 % of the knee's), the refusals' p50 (fast) and any without Retry-After.
 * The loads are testkit's (the drills'): latency from when each request was sent, the client's
 * connections never the bottleneck. Beside each row: the refusals the services counted by reason,
 * the gateway's own count of sign answers it gave later than the deadline plus 100 ms after
 * reading the request (its latency histogram), the gateway's and the signer's CPU per request,
 * how busy the machine's cores were (/proc/stat), and how late this process's own event loop
 * ran (its lateness is in every latency it measures).
 */
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { createRedis, redisReady, type RedisClient } from '@pmm/core';
import { GATEWAY_SETTINGS } from '@pmm/gateway';
import {
  closedSigns,
  KNEE_CLIENTS,
  pacedSigns,
  processCpuSeconds,
  RawHttpPool,
  type SignLoadResult,
} from '@pmm/testkit';
import type { ChainStack } from '@pmm/devnet';
import { seed, signBody, startMainSystem, startModeSystem, stopEverything } from './bench-systems';
import type { ModeRedis } from './durability-modes';

/** A system under test as the bench starts it (bench-systems.ts). */
export interface FirmSystem {
  name: string;
  /** The gateway's public port. */
  port: number;
  apiKey: string;
  chain: ChainStack;
  /** The gateway's and the signer's /metrics (the gateway's first). */
  metricsUrls: string[];
  /** The gateway's and the signer's processes. */
  pair: number[];
  /** The processes the row also costs, by name: the chain's node, each Redis server. */
  others: Record<string, number>;
}

/** Firm quotes through `s`: each a different amount, from inside the first ask tier of every devnet chain. */
export function firmTarget(s: FirmSystem): FirmTarget {
  const base = 1_000n * 10n ** BigInt(s.chain.quoteToken.decimals);
  return {
    name: s.name,
    url: `http://127.0.0.1:${s.port}/v2/swap/sign`,
    apiKey: s.apiKey,
    body: (i) => signBody(s.chain, base + BigInt(i)),
    metricsUrls: s.metricsUrls,
    pids: [s.pair[0]!, s.pair[1]!],
    others: s.others,
  };
}

export interface FirmTarget {
  name: string;
  /** The gateway's sign URL. */
  url: string;
  apiKey: string;
  /** The body of the `i`-th firm quote (a different amount each). */
  body(i: number): string;
  /** The gateway's and the signer's /metrics (the gateway's first): each row's refusals by reason are read from them. */
  metricsUrls: string[];
  /** The gateway's and the signer's processes. */
  pids: [gateway: number, signer: number];
  /** The other processes each row costs (the node, Redis), by name. */
  others: Record<string, number>;
}

/** What a row cost and how the machine ran meanwhile. */
export interface RowCost {
  /** CPU µs per request of the gateway and of the signer. */
  gatewayUs: number;
  signerUs: number;
  /** CPU µs per request of the other processes (the node, Redis) by name, and of this load's own process. */
  othersUs: Record<string, number>;
  clientUs: number;
  /** Share of both cores busy (every process's), %. */
  machineBusy: number;
  /** This process's event loop delay at its worst, ms. */
  clientLagMs: number;
}

export interface OverloadRow {
  system: string;
  load: string;
  offered: number;
  seconds: number;
  result: SignLoadResult;
  /**
   * What the services counted during the row: refusals by `<service>_<kind>:<reason>`;
   * `gateway_late` the sign answers it gave after the deadline plus 100 ms; `firm_quotes` and
   * `node_calls` the signer's firm quotes and its node calls for them.
   */
  refusals: Record<string, number>;
  cost: RowCost;
}

export interface OverloadFigures {
  /** 200s per second. */
  goodput: number;
  /** Share of the answers that are 200, %. */
  okShare: number;
  /** Every answer's latency (200 or not), ms. */
  p50: number;
  p99: number;
  max: number;
  /** The 200s' p99, and the refusals' p50, ms. */
  okP99: number;
  refusedP50: number;
  /** Refusals that are not 503 with Retry-After. */
  strange: number;
}

const quantile = (values: number[], q: number) => {
  const sorted = Float64Array.from(values).sort();
  return sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]! : NaN;
};

export function figuresOf(row: OverloadRow): OverloadFigures {
  const { result: r, seconds } = row;
  const all = [...r.ok.map((a) => a.ms), ...r.refused.map((a) => a.ms)];
  const answered = all.length;
  return {
    goodput: r.ok.length / seconds,
    okShare: answered ? (100 * r.ok.length) / r.sent : 0,
    p50: quantile(all, 0.5),
    p99: quantile(all, 0.99),
    max: answered ? Math.max(...all) : NaN,
    okP99: quantile(
      r.ok.map((a) => a.ms),
      0.99,
    ),
    refusedP50: quantile(
      r.refused.map((a) => a.ms),
      0.5,
    ),
    strange: r.refused.filter((a) => a.status !== 503 || a.retryAfter === undefined).length + (r.sent - answered),
  };
}

let next = 0;

/** The gateway's sign answers slower than the deadline plus 100 ms: its histogram's bucket. */
const LATE_BUCKET = '0.5';

/**
 * Every refusal counter of the services, by `<service>_<kind>:<reason>` (summed over `urls`), and
 * `gateway_late`: the sign answers the gateway (the first URL) gave slower than LATE_BUCKET.
 */
async function counts(urls: string[]): Promise<Record<string, number>> {
  const found: Record<string, number> = {};
  const add = (name: string, n: number) => (found[name] = (found[name] ?? 0) + n);
  for (const [i, url] of urls.entries()) {
    const text = await (await fetch(url)).text();
    for (const m of text.matchAll(/^(\w+)_(overload|deadline)_refusals_total\{reason="(\w+)"[^}]*\} (\S+)$/gm))
      add(`${m[1]}_${m[2]}:${m[3]}`, Number(m[4]));
    if (i > 0) {
      // The signer's node calls for its firm quotes: how well a block's quotes share them.
      for (const m of text.matchAll(/^signer_firm_quote(s|_node_calls)_total\{[^}]*\} (\S+)$/gm))
        add(m[1] === 's' ? 'firm_quotes' : 'node_calls', Number(m[2]));
      continue;
    }
    for (const m of text.matchAll(/^http_request_duration_seconds_(count|bucket)\{([^}]*)\} (\S+)$/gm)) {
      if (!m[2]!.includes('swap/sign')) continue;
      if (m[1] === 'count') add('gateway_late', Number(m[3]));
      else if (m[2]!.includes(`le="${LATE_BUCKET}"`)) add('gateway_late', -Number(m[3]));
    }
  }
  return found;
}

/** The process of the devnet node serving `chain` (the anvil listening on its RPC port). */
function nodePid(chain: ChainStack): number {
  const port = new URL(chain.rpcUrl).port;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let args: string[];
    try {
      args = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
    } catch {
      continue; // gone meanwhile
    }
    const at = args.indexOf('--port');
    if (path.basename(args[0] ?? '') === 'anvil' && at >= 0 && args[at + 1] === port) return Number(entry);
  }
  throw new Error(`no anvil on port ${port}`);
}

/** The process of a Redis server (INFO server). */
async function redisPid(redis: RedisClient): Promise<number> {
  return Number(/^process_id:(\d+)/m.exec(String(await redis.info('server')))?.[1]);
}

/** What a row costs besides the main system's gateway and signer: its chain's node and the Redis at `redis`. */
export async function mainSystemOthers(chain: ChainStack, redis: RedisClient): Promise<Record<string, number>> {
  return { node: nodePid(chain), redis: await redisPid(redis) };
}

/** The same for a durability mode's system (bench-systems.ts startModeSystem): its node and every Redis node. */
export async function modeSystemOthers(s: { chain: ChainStack; redis: ModeRedis }): Promise<Record<string, number>> {
  const others: Record<string, number> = { node: nodePid(s.chain) };
  const names = s.redis.nodes.length === 1 ? ['redis'] : ['redis primary', 'redis replica'];
  for (const [i, node] of s.redis.nodes.entries()) others[names[i] ?? `redis ${i}`] = await redisPid(node);
  return others;
}

/** The cores' busy and total time so far, in clock ticks (/proc/stat's first line). */
function machineTicks(): { busy: number; total: number } {
  const fields = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
  const total = fields.reduce((a, b) => a + b, 0);
  // idle and iowait
  return { busy: total - fields[3]! - fields[4]!, total };
}

/** Runs `row`, and reads what the services counted and what it cost meanwhile. */
async function during<T extends { sent: number }>(
  target: FirmTarget,
  row: () => Promise<T>,
): Promise<[T, Record<string, number>, RowCost]> {
  const before = await counts(target.metricsUrls);
  const cpu = target.pids.map(processCpuSeconds);
  const others = Object.values(target.others).map(processCpuSeconds);
  const client = process.cpuUsage();
  const ticks = machineTicks();
  const loop = monitorEventLoopDelay({ resolution: 10 });
  loop.enable();
  const value = await row();
  loop.disable();
  const ticksAfter = machineTicks();
  const cpuAfter = target.pids.map(processCpuSeconds);
  const othersAfter = Object.values(target.others).map(processCpuSeconds);
  const clientCpu = process.cpuUsage(client);
  const after = await counts(target.metricsUrls);
  const added: Record<string, number> = {};
  for (const [name, n] of Object.entries(after)) if (n > (before[name] ?? 0)) added[name] = n - (before[name] ?? 0);
  const perRequest = (i: number) => ((cpuAfter[i]! - cpu[i]!) * 1e6) / Math.max(1, value.sent);
  return [
    value,
    added,
    {
      gatewayUs: perRequest(0),
      signerUs: perRequest(1),
      othersUs: Object.fromEntries(
        Object.keys(target.others).map((name, i) => [
          name,
          ((othersAfter[i]! - others[i]!) * 1e6) / Math.max(1, value.sent),
        ]),
      ),
      clientUs: (clientCpu.user + clientCpu.system) / Math.max(1, value.sent),
      machineBusy: (100 * (ticksAfter.busy - ticks.busy)) / Math.max(1, ticksAfter.total - ticks.total),
      clientLagMs: loop.max / 1e6,
    },
  ];
}

/**
 * The three loads on one system: paced 500/s, the knee, twice the knee; after `warmSeconds` of
 * the knee's loop, unmeasured. One set of connections for all (new ones by the hundred at once
 * overflow the gateway's accept queue, and the kernel retries them after 1 s, then 3 s).
 */
export async function overloadRows(target: FirmTarget, seconds: number, warmSeconds: number): Promise<OverloadRow[]> {
  const { url, body } = target;
  const headers = { 'x-api-key': target.apiKey };
  const pool = new RawHttpPool(url, 1_024);
  try {
    const closed = async (loopSeconds: number) => {
      const result = await closedSigns({
        url,
        headers,
        body,
        clients: KNEE_CLIENTS,
        seconds: loopSeconds,
        firstIndex: next,
        pool,
      });
      next += result.sent;
      return result;
    };
    if (warmSeconds > 0) await closed(warmSeconds);
    const paced = async (load: string, perSecond: number): Promise<OverloadRow> => {
      const first = next;
      const [result, refusals, cost] = await during(target, async () => {
        const run = pacedSigns({ url, headers, perSecond, pool, firstIndex: first, body });
        await new Promise((r) => setTimeout(r, seconds * 1_000));
        return run.stop();
      });
      next += result.sent;
      return { system: target.name, load, offered: perSecond, seconds, result, refusals, cost };
    };
    const rows = [await paced('paced 500/s', 500)];
    const [knee, refusals, cost] = await during(target, () => closed(seconds));
    const kneeRate = knee.ok.length / knee.seconds;
    rows.push({
      system: target.name,
      load: `knee (${KNEE_CLIENTS} clients)`,
      offered: NaN,
      seconds: knee.seconds,
      result: knee,
      refusals,
      cost,
    });
    rows.push(await paced('2× knee', Math.round(2 * kneeRate)));
    return rows;
  } finally {
    pool.destroy();
  }
}

const col = (s: string, width: number) => s.padStart(width);
const ms = (v: number) => (Number.isNaN(v) ? 'n/a' : v < 10 ? v.toFixed(2) : v.toFixed(1));

/** Prints the rows, then each system's goals against `deadlineMs` (the gateway's SIGN_DEADLINE_MS). */
export function printOverloadRows(rows: OverloadRow[], deadlineMs: number): void {
  console.log(
    `\nfirm quotes past capacity (each a different amountIn; latency from when each request was sent, ms; deadline ${deadlineMs} ms):`,
  );
  console.log(
    '  system / load'.padEnd(34),
    col('offered/s', 10),
    col('200/s', 7),
    col('200 %', 7),
    col('p50', 7),
    col('p99', 7),
    col('max', 7),
    col('200 p99', 8),
    col('503 p50', 8),
    col('odd', 5),
  );
  for (const row of rows) {
    const f = figuresOf(row);
    console.log(
      `  ${row.system} ${row.load}`.padEnd(34),
      col(Number.isNaN(row.offered) ? 'closed' : String(row.offered), 10),
      col(f.goodput.toFixed(0), 7),
      col(f.okShare.toFixed(1), 7),
      col(ms(f.p50), 7),
      col(ms(f.p99), 7),
      col(ms(f.max), 7),
      col(ms(f.okP99), 8),
      col(ms(f.refusedP50), 8),
      col(String(f.strange), 5),
    );
  }
  console.log(
    "  each row: CPU µs per request (gateway, signer; the node, Redis, this load's client), the cores busy, this client's worst event-loop delay; what the services counted:",
  );
  for (const row of rows) {
    const c = row.cost;
    const { firm_quotes: quotes = 0, node_calls: calls = 0, ...refused } = row.refusals;
    const listed = Object.entries(refused).map(([name, n]) => `${name} ${n}`);
    console.log(
      `    ${row.system} ${row.load}: gateway ${c.gatewayUs.toFixed(0)}, signer ${c.signerUs.toFixed(0)}; ` +
        `${Object.entries(c.othersUs)
          .map(([name, us]) => `${name} ${us.toFixed(0)}`)
          .join(', ')}, client ${c.clientUs.toFixed(0)}; ` +
        `cores ${c.machineBusy.toFixed(0)} % busy; client lag ≤ ${c.clientLagMs.toFixed(0)} ms; ` +
        `node calls per firm quote ${quotes ? (calls / quotes).toFixed(3) : 'n/a'}; ` +
        `${listed.length ? listed.join(', ') : 'nothing refused'}`,
    );
  }
  const goal = (text: string, met: boolean, figures: string) =>
    console.log(`goal ${text}: ${met ? 'met' : 'NOT met'} (${figures})`);
  for (const system of [...new Set(rows.map((r) => r.system))]) {
    const of = (load: string) => figuresOf(rows.find((r) => r.system === system && r.load.startsWith(load))!);
    const [p500, knee, twice] = [of('paced 500/s'), of('knee'), of('2× knee')];
    goal(
      `${system}: firm quotes paced 500/s, ≥ 99 % answered 200 and p99 ≤ 100 ms`,
      p500.okShare >= 99 && p500.p99 <= 100,
      `${p500.okShare.toFixed(1)} %, p99 ${ms(p500.p99)} ms`,
    );
    const late = rows.find((r) => r.system === system && r.load.startsWith('2×'))!.refusals.gateway_late ?? 0;
    goal(
      `${system}: firm quotes at 2× the knee (${(2 * knee.goodput).toFixed(0)}/s), p99 ≤ the deadline (${deadlineMs} ms)`,
      twice.p99 <= deadlineMs,
      `p99 ${ms(twice.p99)} ms, max ${ms(twice.max)} ms; answers the gateway gave later than the deadline + 100 ms: ${late}`,
    );
    goal(
      `${system}: firm quotes at 2× the knee, 200s per second ≥ 90 % of the knee's (${knee.goodput.toFixed(0)}/s)`,
      twice.goodput >= 0.9 * knee.goodput,
      `${twice.goodput.toFixed(0)}/s, ${((100 * twice.goodput) / knee.goodput).toFixed(1)} %`,
    );
  }
}

/**
 * `BENCH_GATEWAY_ONLY=overload npm run bench gateway`: these rows alone, on the main system
 * (npm start's shape on `redisUrl`) and the replica mode's.
 */
export async function overloadOnly(redisUrl: string, prefix: string, seconds: number, warmSeconds: number) {
  const redis = createRedis(redisUrl, { name: 'bench-setup' });
  try {
    await redisReady(redis);
    const { apiKey } = await seed(redis, prefix);
    const replicaStarting = startModeSystem('replica', prefix);
    replicaStarting.catch(() => undefined);
    const { sys } = await startMainSystem(redis, redisUrl, prefix);
    const replica = await replicaStarting;
    const pid = (service: 'gateway' | 'signer') => sys.processesOf(service)[0]!.child.pid!;
    const systems = [
      firmTarget({
        name: 'fsync',
        port: Number(new URL(sys.gateway.url).port),
        apiKey,
        chain: sys.chain(8453),
        metricsUrls: [`${sys.gateway.opsUrl}/metrics`, sys.processesOf('signer')[0]!.metricsUrl!],
        pair: [pid('gateway'), pid('signer')],
        others: await mainSystemOthers(sys.chain(8453), redis),
      }),
      firmTarget({
        name: 'replica',
        ...replica,
        apiKey: replica.keys.apiKey,
        others: await modeSystemOthers(replica),
      }),
    ];
    const rows: OverloadRow[] = [];
    for (const t of systems) rows.push(...(await overloadRows(t, seconds, warmSeconds)));
    printOverloadRows(rows, GATEWAY_SETTINGS.signDeadlineMs.default!);
    const left = await redis.keys(`${prefix}:*`);
    if (left.length) await redis.del(...left);
  } finally {
    await stopEverything();
    redis.disconnect();
  }
}
