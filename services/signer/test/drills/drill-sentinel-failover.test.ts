/**
 * Drill: a Sentinel fail-over under a paced sign load. One primary and one replica started with
 * the shipped deploy/redis/replicated.conf, one sentinel (with a password of its own, as charted
 * Sentinels run), the signer on `redis-sentinel://…/pmm` with REDIS_SENTINEL_PASSWORD
 * (REDIS_DURABILITY=auto: WAIT for one replica). `SENTINEL FAILOVER`
 * while signing; once the old primary has rejoined as a replica (what discarded 1,106
 * acknowledged records before), every signature a client received must have its record on the
 * new primary, and signing must have resumed there. With the shipped settings the load is firm
 * quotes (issue 50: 500 a second, each its own amountIn, quoted by the devnet's node), the
 * heaviest sign; its answers' p99 before the fail-over is printed, not asserted (the machine is
 * shared: capacity.md has the figures).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, mkdirSync, mkdtempSync, openSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createRedis, redisReady, type RedisClient } from '@pmm/core';
import { startDevnet, type Devnet } from '@pmm/devnet';
import { REPO_ROOT, freePort, loadReport, stopAll, until, waitForPort } from '@pmm/testkit';
import {
  DRILL_SIGNS_PER_SECOND,
  firmSignerLoad,
  lostRecords,
  signerLoad,
  startDrillSigner,
  type DrillSigner,
} from '../support/sign-drill';

const SHIPPED_CONF = path.join(REPO_ROOT, 'deploy/redis/replicated.conf');
/**
 * The longest a client may go without a signature from SENTINEL FAILOVER on (seen: 7.2-8.4 s; 15.8-16.6
 * s with Sentinel's own timers). Until the old primary rejoins as a replica the new primary has
 * no replica to acknowledge (WAIT 1, min-replicas-to-write 1): the sentinel converts it 2 s after
 * the promotion (its timers below), and its full sync then waits repl-diskless-sync-delay (5 s).
 */
const RESUME_WITHIN_MS = 12_000;

/** DRILL_KEEP=1 keeps the nodes' folders and logs. */
const KEEP = process.env.DRILL_KEEP === '1';
const children: ChildProcess[] = [];
const clients: RedisClient[] = [];
let dir: string;
const dirs: string[] = [];
let signer: DrillSigner | undefined;
let devnet: Promise<Devnet> | undefined;

afterAll(async () => {
  await signer?.close();
  await (await devnet?.catch(() => undefined))?.stop();
  for (const c of clients) c.disconnect();
  await stopAll(children, 'SIGKILL');
  if (KEEP) console.log(`drill files kept in ${dirs.join(', ')}`);
  else for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** A redis-server; its output goes to `<dir>/<name>.log` (read it when a drill fails). */
function server(name: string, args: string[]): void {
  const log = openSync(path.join(dir, `${name}.log`), 'a');
  children.push(spawn('redis-server', args, { stdio: ['ignore', log, log] }));
  closeSync(log);
}

function client(port: number, password?: string): RedisClient {
  const auth = password === undefined ? '' : `:${encodeURIComponent(password)}@`;
  const c = createRedis(`redis://${auth}127.0.0.1:${port}`, { name: 'drill-admin' });
  clients.push(c);
  return c;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** A field of INFO replication; undefined while the node does not answer (a role change drops its clients). */
const info = async (c: RedisClient, field: string) =>
  c.call('INFO', 'replication').then(
    (text) => new RegExp(`^${field}:(.*)\\r?$`, 'm').exec(String(text))?.[1],
    () => undefined,
  );

interface FailoverDrill {
  /** The data nodes include deploy/redis/replicated.conf; else only AOF with fsync always. */
  shipped: boolean;
  /** Sign load after SENTINEL FAILOVER. */
  afterMs: number;
  /** The sentinel's own password (`requirepass`), given to the signer as REDIS_SENTINEL_PASSWORD. */
  sentinelPassword?: string;
  /** The load is firm quotes on the devnet chain 8453 (started meanwhile), not plain signs. */
  firm?: boolean;
}

const quantile = (values: number[], q: number) => {
  const sorted = Float64Array.from(values).sort();
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;
};

/** One primary, one replica, one sentinel; SENTINEL FAILOVER under DRILL_SIGNS_PER_SECOND signs/s. */
async function failoverDrill(name: string, opts: FailoverDrill) {
  dir = mkdtempSync(path.join(tmpdir(), 'drill-sentinel-'));
  dirs.push(dir);
  // The chain deploys while the Redis nodes and the sentinel start.
  if (opts.firm) devnet = startDevnet({ chains: [8453], blockIntervalMs: 0 });
  const ports: number[] = [];
  while (ports.length < 3) {
    const p = await freePort();
    if (!ports.includes(p)) ports.push(p);
  }
  const [primaryPort, replicaPort, sentinelPort] = ports as [number, number, number];
  const node = (port: number, name: string, extra: string[] = []) => {
    const nodeDir = path.join(dir, name);
    mkdirSync(nodeDir);
    // As deployed: the node's own file (Sentinel rewrites it) includes the shipped settings.
    const conf = path.join(nodeDir, 'redis.conf');
    writeFileSync(conf, opts.shipped ? `include ${SHIPPED_CONF}\n` : 'appendonly yes\nappendfsync always\n');
    server(name, [conf, '--port', String(port), '--bind', '127.0.0.1', '--dir', nodeDir, ...extra]);
  };
  node(primaryPort, 'a');
  node(replicaPort, 'b', ['--replicaof', '127.0.0.1', String(primaryPort)]);
  await Promise.all([primaryPort, replicaPort].map((p) => waitForPort(p)));
  const primary = client(primaryPort);
  await redisReady(primary);
  await until(
    async () =>
      // The replica's first sync waits repl-diskless-sync-delay (5 s): until then WAIT counts 0.
      (await info(primary, 'slave0'))?.includes('state=online') &&
      (await info(primary, 'min_slaves_good_slaves')) !== '0',
    15_000,
    'a good replica (min-replicas-to-write)',
    100,
  );

  // The sentinel rewrites its own file: a copy per run.
  const sentinelConf = path.join(dir, 'sentinel.conf');
  writeFileSync(
    sentinelConf,
    [
      `port ${sentinelPort}`,
      'bind 127.0.0.1',
      `dir ${dir}`,
      `sentinel monitor pmm 127.0.0.1 ${primaryPort} 1`,
      'sentinel down-after-milliseconds pmm 1000',
      'sentinel failover-timeout pmm 10000',
      ...(opts.sentinelPassword === undefined ? [] : [`requirepass "${opts.sentinelPassword}"`]),
      '',
    ].join('\n'),
  );
  server('sentinel', [sentinelConf, '--sentinel']);
  await waitForPort(sentinelPort);
  const sentinel = client(sentinelPort, opts.sentinelPassword);
  await redisReady(sentinel);
  // This sentinel's own timers, shorter than Sentinel's (SENTINEL DEBUG; nothing shipped sets
  // them): each node's INFO read every second rather than every 10 s, and a demoted primary that
  // still reports itself primary converted 2 s (4 publish periods) after the promotion rather than
  // 8 to 10 s. The fail-over takes the same steps at the same pace up to the +switch-master (its
  // INFO is read every second anyway), so the writes the old primary takes before the signer
  // leaves it are the same, and its full sync still discards them; only its rejoining as a
  // replica, and with it signing, comes sooner.
  await sentinel.call('SENTINEL', 'DEBUG', 'info-period', '1000', 'publish-period', '500');
  await until(
    async () => ((await sentinel.call('SENTINEL', 'REPLICAS', 'pmm')) as unknown[]).length === 1,
    15_000,
    'the sentinel sees the replica',
    100,
  );

  const chain = opts.firm ? (await devnet!).stack.chains['8453'] : undefined;
  signer = await startDrillSigner(
    `redis-sentinel://127.0.0.1:${sentinelPort}/pmm`,
    opts.sentinelPassword === undefined ? {} : { REDIS_SENTINEL_PASSWORD: opts.sentinelPassword },
    chain,
  );
  const load = chain
    ? firmSignerLoad(signer.url, DRILL_SIGNS_PER_SECOND, chain)
    : signerLoad(signer.url, DRILL_SIGNS_PER_SECOND);
  await sleep(2_000);
  const failoverAt = Date.now() - load.started;
  await sentinel.call('SENTINEL', 'FAILOVER', 'pmm');
  await sleep(opts.afterMs);
  const loadEnd = Date.now() - load.started;
  const result = await load.stop();

  // The fail-over is complete: a replica is the primary and the old primary replicates it.
  const promoted = Number(((await sentinel.call('SENTINEL', 'GET-MASTER-ADDR-BY-NAME', 'pmm')) as string[])[1]);
  expect(promoted).toBe(replicaPort);
  await until(
    async () => (await info(primary, 'role')) === 'slave' && (await info(primary, 'master_link_status')) === 'up',
    20_000,
    'the old primary replicating the new one',
    100,
  );
  const missing = await lostRecords(`redis://127.0.0.1:${promoted}`, signer.prefix, result.ok);
  await signer.close();
  signer = undefined;
  // Signing resumed: the longest stretch without an answered signature from the fail-over on.
  const times = [failoverAt, ...result.ok.map((a) => a.at).filter((t) => t >= failoverAt), loadEnd];
  const gap = Math.max(...times.slice(1).map((t, i) => t - times[i]!));
  const afterwards = result.ok.filter((a) => a.at > failoverAt + RESUME_WITHIN_MS).length;
  // Every answer before the fail-over (200 or not), from when its request was sent.
  const earlier = [...result.ok, ...result.refused].filter((a) => a.at < failoverAt);
  const earlierOk = result.ok.filter((a) => a.at < failoverAt).length;
  console.log(
    loadReport(
      name,
      result,
      missing.length,
      `longest time without a signature from the fail-over on ${gap} ms; answered 200 from ${RESUME_WITHIN_MS / 1000} s after it ${afterwards}; ` +
        `before the fail-over ${earlierOk} of ${earlier.length} answered 200, p50 ${quantile(
          earlier.map((a) => a.ms),
          0.5,
        ).toFixed(1)} ms, p99 ${quantile(
          earlier.map((a) => a.ms),
          0.99,
        ).toFixed(1)} ms`,
    ),
  );
  await stopAll(children.splice(0), 'SIGKILL');
  return { result, missing, gap, afterwards, before: result.ok.filter((a) => a.at < failoverAt).length };
}

// Each drill waits about 20 to 30 s by design (the first sync, 14 s or 8 s of load, the old
// primary's conversion and sync); at a load average of 15 one took over 90 s (with Sentinel's own timers).
it('drill: a Sentinel fail-over (shipped settings, a sentinel with its own password) during a paced load of firm quotes loses no record, and signing resumes on the new primary', async () => {
  const drill = await failoverDrill('Sentinel fail-over drill (shipped settings, firm quotes)', {
    shipped: true,
    // Past RESUME_WITHIN_MS: signs answered after it show signing resumed on the new primary.
    afterMs: 14_000,
    sentinelPassword: 'sentinel-own-password-1',
    firm: true,
  });
  expect(drill.missing).toEqual([]);
  expect(drill.before).toBeGreaterThan(0);
  expect(drill.afterwards).toBeGreaterThan(0);
  expect(drill.gap).toBeLessThan(RESUME_WITHIN_MS);
}, 180_000);

// Without min-replicas-to-write the demoted primary takes writes until it is converted (what
// lost 1,106 records in the trial that opened this): the signer's WAIT alone must hold.
it('drill: a Sentinel fail-over with plain Redis settings (no min-replicas-to-write) loses no record either', async () => {
  const drill = await failoverDrill('Sentinel fail-over drill (plain settings)', { shipped: false, afterMs: 8_000 });
  expect(drill.missing).toEqual([]);
  expect(drill.before).toBeGreaterThan(0);
}, 180_000);
