/**
 * The system under test: the one builder every end-to-end, on-chain, settlement and console
 * test (and the benchmarks that need the whole system) starts what it needs with.
 *
 * `startSystem()` starts, on free ports and in a temporary folder removed at `stop()`:
 * - devnet chains (anvil with the reference contracts, packages/devnet), fast blocks by default;
 * - the deployment's Redis as `npm start` starts it (testkit's privateStackRedis): two private
 *   servers, the records (REDIS_RECORDS_URL: keys, integrators, halts, the audit trail, the
 *   ledger) and what can be rebuilt (REDIS_URL: books, registries, mids, rate limits, queues;
 *   core's redis-roles.ts says which key is which), both with `npm start`'s Redis users, so that
 *   a key looked for on the wrong server, or outside a process's rights, fails here as it would
 *   deployed. One setting that differs from `npm start`: they keep nothing on disk, where
 *   `npm start`'s records fsync each write (the signer here runs with REDIS_DURABILITY=none;
 *   measured, fsync cost these tests about a second of CPU each, and durable writes have their
 *   own drills and stack-e2e, which runs `npm start` itself; the ledgers, whose limits write
 *   halts, likewise). The other: each sign's deadline (the gateway's SIGN_DEADLINE_MS, the
 *   signer's MAX_SIGN_DEADLINE_MS) is TEST_SIGN_DEADLINE_MS, not the shipped 400 and 750 ms.
 *   These tests are about what a sign does, not how fast: a full run loads the two cores to a
 *   load average of 10 to 25, where signs at 400 ms were refused 503 (seen in settlement.devnet).
 *   The deadline's own tests, the overload drill and stack-e2e (`npm start` itself) run the
 *   shipped ones; a test sets its own through `env`. Or the Redis `redisUrl` (and
 *   `redisRecordsUrl`) names, users and all;
 * - the services as processes from their builds (`services/<service>/dist/main.js`), with
 *   the settings `npm start` gives them (packages/core/src/stack/stack-processes.ts, the one
 *   definition both use), each connected as its own Redis user on each server (`indexer-<id>`,
 *   `ledger-<id>`, `signer`, `gateway`: System.redisEnvOf): one indexer per chain (more with
 *   `indexerReplicas`), the signer, the gateway with a development API key whitelisted for every
 *   chain's test user. They load while the devnet deploys; each is ready (its `/readyz` answers
 *   200) when the promise resolves.
 *
 * A test reads and writes through the administrators' URLs: the records on `redisRecordsUrl`,
 * the rest on `redisUrl`. An operator command it runs (`keys`, `audit`, `settle`, `markouts`,
 * `risk`) gets its own user's URLs, as `npm start` gives them: `redisEnvOf('keys' | 'operator' |
 * 'risk')`.
 *
 * Tests and benchmarks of in-process code against the chains ask for no service (`services:
 * []`): the chains and the private Redis (started while the chains deploy, so it costs a test
 * that needs none about 25 ms), or with `redisUrl` the Redis `npm run bench` gives a benchmark,
 * persistent as shipped.
 *
 * The services run from dist/: after changing a service's source, build (`npx tsc -b`) before
 * running a test that starts it; `startSystem()` refuses a service whose build is older than its
 * source. In-process tests of one service (supertest against its app) stay in the service's own
 * test support; this builder is for tests that need the system as it runs.
 */
import { randomBytes } from 'node:crypto';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type * as Core from '@pmm/core';
import type { StackCommon, StackService } from '@pmm/core';
import type { ChainStack, Devnet, StartDevnetOptions } from '@pmm/devnet';
import { freePort } from './ports';
import type { PrivateRedis } from '../redis/private-redis';
import { privateStackRedis, type PrivateStackRedis } from '../redis/private-stack-redis';
import { stopProcess } from './processes';
import { REPO_ROOT } from './repo-root';

type StackProcesses = Pick<
  typeof Core,
  'SERVICE_MAIN' | 'STACK_LOG_LEVEL' | 'serviceCommand' | 'indexerEnv' | 'ledgerEnv' | 'signerEnv' | 'gatewayEnv'
>;
let loaded: StackProcesses | undefined;

/**
 * The processes' definitions from core's build, as scripts/start.mjs reads them (the services
 * run from their builds anyway). Loaded on first use, not imported: every test imports
 * @pmm/testkit, few start a service, and core's whole index costs about a third of a second.
 */
function stackProcesses(): StackProcesses {
  loaded ??= createRequire(__filename)(
    path.join(REPO_ROOT, 'packages/core/dist/stack/stack-processes.js'),
  ) as StackProcesses;
  return loaded;
}

/** The devnet's own options, passed through as they are (one definition: packages/devnet). */
export interface SystemOptions extends Pick<StartDevnetOptions, 'blockGasLimit' | 'market'> {
  /** Devnet chains; default all three. */
  chains?: readonly number[];
  /** Interval mining per chain or for all, ms (0: a block per transaction); default 500. */
  blockIntervalMs?: number | Record<number, number>;
  /** Record EVM steps (for the struct-log tracer); default off. */
  stepsTracing?: boolean;
  /**
   * The services to start; default the indexers, the signer and the gateway. The maker's ledger
   * (one per chain, as `npm start` runs it) only when asked: `'ledger'`. Whatever is started needs
   * no other option.
   */
  services?: readonly StackService[];
  /** Indexer processes per chain (replicas share blocks through the queue); default 1. */
  indexerReplicas?: Readonly<Record<number, number>>;
  /**
   * Runs once Redis and the chains are up, before any service reads its settings: what a test
   * writes for services it does not start (the pair registry an indexer would write, say).
   * `signerUrl` is where the signer will listen: a test that puts a relay between the gateway
   * and the signer (`env.gateway.SIGNER_URL`) points it there before the gateway's readiness
   * check reaches the signer through it.
   */
  beforeServices?: (ready: {
    /** The administrator of what can be rebuilt (books, registries, mids): System.redisUrl. */
    redisUrl: string;
    /** The administrator of the records (keys, integrators, halts, the audit trail, the ledger): System.redisRecordsUrl. */
    redisRecordsUrl: string;
    chains: Readonly<Record<string, ChainStack>>;
    signerUrl: string;
  }) => Promise<void>;
  /**
   * A Redis to use instead of the private ones (left running, its data left to the caller: set
   * REDIS_KEY_PREFIX in `env`), every process connecting with this URL as it is (no user of its
   * own): the gateway benchmark measures on `npm run bench`'s Redis, which keeps the append-only
   * file as shipped, or on one given as REDIS_URL.
   */
  redisUrl?: string;
  /**
   * The records' server (REDIS_RECORDS_URL, core's redis-roles.ts), with `redisUrl`: a system
   * on two servers as `npm start` runs it. Absent: one server holds both roles.
   */
  redisRecordsUrl?: string;
  /**
   * The private Redis to use, started by the caller (testkit's privateStackRedis, with the
   * persistence a drill needs, say) and left running: every process connects as its own user, as
   * on the one startSystem starts itself.
   */
  stackRedis?: PrivateStackRedis;
  /** Settings over the stack's, per service (faster liveness, lower limits…). */
  env?: Partial<Record<StackService, Readonly<Record<string, string>>>>;
  /**
   * `false`: the chains file names no reference feed (the devnet still deploys them): a
   * deployment without references, which benchmarks compare with one that has them. Default: each
   * pair's devnet feed is its reference.
   */
  references?: false;
  /**
   * Seconds a signed swap stays valid: every chain's router is deployed with this validity and
   * the signer is set to it (QUOTE_VALIDITY_SECONDS_<id>, which it checks against the router at
   * start). Default the devnet's 60, the reference router's, as `npm start` runs. For tests that
   * wait for signatures' windows to pass (fates judged, QuoteExpired): shorter waits; long enough
   * still that a swap sent at once is mined inside its window on a loaded machine.
   */
  quoteValiditySeconds?: number;
}

/** One started service process. */
export interface ServiceProcess {
  readonly name: string;
  readonly child: ChildProcess;
  /** The URL its readiness is polled at (startService, startSystem). */
  readonly readyUrl?: string;
  /** Its Prometheus endpoint (startSystem's processes). */
  readonly metricsUrl?: string;
  /** Everything it wrote to stdout and stderr so far. */
  output(): string;
  /** Stops it (SIGTERM: it drains) and waits until it is gone. */
  stop(signal?: NodeJS.Signals): Promise<void>;
  /**
   * Stops it with `signal` and starts the same command with the same environment (a restarted
   * replica); resolves once its `readyUrl` answers. `child` is then the new process.
   */
  restart(signal?: NodeJS.Signals): Promise<void>;
}

export interface System {
  readonly devnet: Devnet;
  /** The devnet chain `chainId` (addresses, tokens, test user). */
  chain(chainId: number): ChainStack;
  /**
   * The private server of what can be rebuilt (stackRedis.rebuildable: books, registries, mids;
   * none when `redisUrl` was given), for fault tests.
   */
  readonly redis: PrivateRedis | undefined;
  /**
   * The private Redis, both servers with `npm start`'s users (none when `redisUrl` was given):
   * its `records` server, and the URLs of users the services do not run as (`keys`, `operator`, `risk`).
   */
  readonly stackRedis: PrivateStackRedis | undefined;
  /**
   * The administrator (every right) of the server of what can be rebuilt: books, pair registries,
   * mids, rate limits, queues (key prefix: the default, `pmm`, unless `env` sets one).
   */
  readonly redisUrl: string;
  /**
   * The administrator of the records' server: API keys, integrators, halts, the audit trail,
   * the ledger (core's redis-roles.ts). `redisUrl` when one server holds both.
   */
  readonly redisRecordsUrl: string;
  /**
   * What a process running as Redis user `user` gets (`gateway`, `signer`, `indexer-<id>`,
   * `ledger-<id>`, `keys`, `operator`, `risk`), as `npm start` gives it: that user's URLs on the
   * private servers; with `redisUrl` given, that Redis's URLs, whoever asks.
   */
  redisEnvOf(user: string): { REDIS_URL: string; REDIS_RECORDS_URL: string };
  /** The chains file the services read (CONFIG_FILE). */
  readonly configFile: string;
  /** The gateway's public URL, operator URL and development key (when the gateway runs). */
  readonly gateway: { url: string; opsUrl: string; apiKey: string };
  /** The signer's URL and the internal token the gateway reaches it with. */
  readonly signer: { url: string; internalToken: string };
  readonly processes: readonly ServiceProcess[];
  /** The processes of `service` (indexers in start order: per chain, then replicas). */
  processesOf(service: StackService): ServiceProcess[];
  /** Stops the services, then the devnet and Redis, and removes the folder. */
  stop(): Promise<void>;
}

const ALL_CHAINS = [8453, 56, 4663] as const;
/** Each sign's deadline in a test system, in ms (see the top of this file). */
const TEST_SIGN_DEADLINE_MS = 5_000;
const ALL_SERVICES: readonly StackService[] = ['indexer', 'signer', 'gateway'];

/** Newest modification time of the files under `dir`, ms. */
function newest(dir: string): number {
  let t = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const at = path.join(dir, entry.name);
    if (entry.isDirectory()) t = Math.max(t, newest(at));
    else if (entry.isFile()) t = Math.max(t, statSync(at).mtimeMs);
  }
  return t;
}

/**
 * Refuses to start a service whose build is older than its source (a test would run stale
 * code). A build touches at least its build info (dist/.tsbuildinfo), so the newest file of
 * dist/ is compared, not main.js, which a build leaves alone when it did not change.
 */
function assertBuilt(service: StackService): void {
  const { SERVICE_MAIN } = stackProcesses();
  // The service's package: the ledger is built with the indexer.
  const dir = path.join(REPO_ROOT, path.dirname(path.dirname(SERVICE_MAIN[service])));
  const main = path.join(REPO_ROOT, SERVICE_MAIN[service]);
  if (!statSync(main, { throwIfNoEntry: false }) || newest(path.join(dir, 'dist')) < newest(path.join(dir, 'src')))
    throw new Error(`${SERVICE_MAIN[service]} is missing or older than its source: run npx tsc -b`);
}

async function waitReady(p: ServiceProcess, timeoutMs = 60_000): Promise<void> {
  if (!p.readyUrl) throw new Error(`${p.name}: no readyUrl to wait for`);
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (p.child.exitCode !== null || p.child.signalCode !== null)
      throw new Error(`${p.name} exited before it was ready:\n${p.output()}`);
    try {
      const res = await fetch(p.readyUrl, { signal: AbortSignal.timeout(1_000) });
      if (res.ok) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`${p.name} not ready after ${timeoutMs / 1000} s:\n${p.output()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

export interface ServiceOptions {
  /** Its whole environment besides PATH (nothing of the test's own leaks in). */
  env: Readonly<Record<string, string>>;
  /** Command-line arguments after the entry point (`--help`). */
  args?: readonly string[];
  /**
   * Polled by startService until it answers 2xx: its `/readyz`, or `/healthz` where readiness
   * needs parts not started. spawnService does not wait (a test that waits for something else).
   */
  readyUrl?: string;
  /** For messages; default the service's name. */
  name?: string;
  /** Its Prometheus endpoint, recorded on the process. */
  metricsUrl?: string;
}

/** Spawns one service from its build, as `npm start` does, without waiting for it. */
export function spawnService(service: StackService, opts: ServiceOptions): ServiceProcess {
  assertBuilt(service);
  const { command, args } = stackProcesses().serviceCommand(service, REPO_ROOT);
  let out = '';
  const launch = () => {
    const started = spawn(command, [...args, ...(opts.args ?? [])], {
      cwd: REPO_ROOT,
      env: { PATH: process.env.PATH ?? '', ...opts.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    started.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    started.stderr!.on('data', (d: Buffer) => (out += d.toString()));
    return started;
  };
  let child = launch();
  const processHandle: ServiceProcess = {
    name: opts.name ?? service,
    get child() {
      return child;
    },
    readyUrl: opts.readyUrl,
    metricsUrl: opts.metricsUrl,
    output: () => out,
    stop: (signal) => stopProcess(child, signal),
    restart: async (signal) => {
      await stopProcess(child, signal);
      child = launch();
      await waitReady(processHandle);
    },
  };
  return processHandle;
}

/**
 * One service process on its own (startSystem's building block), for tests of a process's
 * life (signals, a killed replica) on a Redis the test provides; resolves once `readyUrl` answers.
 */
export async function startService(service: StackService, opts: ServiceOptions): Promise<ServiceProcess> {
  const p = spawnService(service, opts);
  try {
    await waitReady(p);
  } catch (err) {
    await p.stop('SIGKILL');
    throw err;
  }
  return p;
}

/** Starts what `opts` asks for and resolves once every part is ready. */
export async function startSystem(opts: SystemOptions = {}): Promise<System> {
  if (opts.redisUrl !== undefined && opts.stackRedis) throw new Error('startSystem: redisUrl or stackRedis, not both');
  const chainIds = [...(opts.chains ?? ALL_CHAINS)];
  const services = opts.services ?? ALL_SERVICES;
  // Loaded here, not at the top: every test imports @pmm/testkit, few start a devnet (ethers and the contracts).
  const { devnetKey, publicStack, startDevnet } = await import('@pmm/devnet');
  const { STACK_LOG_LEVEL, gatewayEnv, indexerEnv, ledgerEnv, signerEnv } = stackProcesses();
  const dir = mkdtempSync(path.join(tmpdir(), 'pmm-system-'));
  const processes: ServiceProcess[] = [];
  let devnetStarting: Promise<Devnet> | undefined;
  let devnet: Devnet | undefined;
  let stackRedis: PrivateStackRedis | undefined;
  const stop = async () => {
    await Promise.all(processes.map((p) => p.stop()));
    // Redis keeps nothing on disk: killed, it loses nothing (SIGTERM would wait for its next
    // 100 ms tick). One the caller gave is the caller's.
    await Promise.all([devnet?.stop(), stackRedis === opts.stackRedis ? undefined : stackRedis?.stop('SIGKILL')]);
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    // The chains deploy while Redis and the services start: a private Redis costs no time
    // over the devnet alone. Its failure is reported where it is awaited, below.
    devnetStarting = startDevnet({
      chains: chainIds,
      // The services' picker: one memory of the ports handed out, the nodes' and the services'.
      pickPort: freePort,
      blockIntervalMs: opts.blockIntervalMs ?? 500,
      stepsTracing: opts.stepsTracing ?? false,
      blockGasLimit: opts.blockGasLimit,
      // A still market unless asked: most tests predict books from the seed plan's curves.
      market: opts.market,
      validitySeconds: opts.quoteValiditySeconds,
    });
    devnetStarting.catch(() => undefined);
    stackRedis =
      opts.stackRedis ??
      (opts.redisUrl === undefined ? await privateStackRedis({ dir: path.join(dir, 'redis') }) : undefined);
    const redisUrl = stackRedis?.rebuildableUrl ?? opts.redisUrl!;
    const redisRecordsUrl = stackRedis?.recordsUrl ?? opts.redisRecordsUrl ?? redisUrl;
    /** As scripts/start.mjs's redisOf: process `user`'s own URLs on the private servers, else the given Redis's. */
    const redisEnvOf = (user: string) =>
      stackRedis?.envOf(user) ?? { REDIS_URL: redisUrl, REDIS_RECORDS_URL: redisRecordsUrl };
    // The services too start while the devnet deploys (loading their code is most of their start):
    // each waits for the chains file, as in the compose devnet profile (CONFIG_WAIT_SECONDS),
    // and the file appears whole (written aside, then renamed) once the chains are up. Their
    // keys are the devnet's, derived from public labels; checked against the devnet below.
    const configFile = path.join(dir, 'chains.json');
    const common: StackCommon = { redisUrl, redisRecordsUrl, configFile, chainIds };
    // As `npm start` runs them: its log level, and waiting for the chains file (above).
    const waitForChains = { LOG_LEVEL: STACK_LOG_LEVEL, CONFIG_WAIT_SECONDS: '120' };
    const key = (role: 'apiSigner' | 'quoter' | 'testUser', id: number) => devnetKey(role, id);

    if (services.includes('indexer')) {
      for (const id of chainIds) {
        for (let replica = 0; replica < (opts.indexerReplicas?.[id] ?? 1); replica++) {
          const port = await freePort();
          const env = {
            ...indexerEnv(common, { chainId: id, port, quoterKey: key('quoter', id).privateKey }),
            ...redisEnvOf(`indexer-${id}`),
            ...waitForChains,
            ...opts.env?.indexer,
          };
          const name = `indexer ${id}#${replica}`;
          const at = `http://127.0.0.1:${port}`;
          processes.push(spawnService('indexer', { name, env, readyUrl: `${at}/readyz`, metricsUrl: `${at}/metrics` }));
        }
      }
    }
    if (services.includes('ledger')) {
      for (const id of chainIds) {
        const port = await freePort();
        const env = {
          ...ledgerEnv(common, { chainId: id, port }),
          ...redisEnvOf(`ledger-${id}`),
          ...waitForChains,
          // The halts its limits trip: nothing fsyncs here (see the top of this file).
          REDIS_DURABILITY: 'none',
          ...opts.env?.ledger,
        };
        const at = `http://127.0.0.1:${port}`;
        processes.push(
          spawnService('ledger', { name: `ledger ${id}`, env, readyUrl: `${at}/readyz`, metricsUrl: `${at}/metrics` }),
        );
      }
    }
    const internalToken = randomBytes(32).toString('base64url');
    const signerPort = await freePort();
    if (services.includes('signer')) {
      const signerKeys = Object.fromEntries(
        chainIds.flatMap((id) => [
          [`SIGNER_KEY_${id}`, key('apiSigner', id).privateKey],
          // The firm quotes of signs with amountIn authorise quote() with the chain's quoter key.
          [`QUOTER_KEY_${id}`, key('quoter', id).privateKey],
        ]),
      );
      const validity =
        opts.quoteValiditySeconds === undefined
          ? {}
          : Object.fromEntries(
              chainIds.map((id) => [`QUOTE_VALIDITY_SECONDS_${id}`, String(opts.quoteValiditySeconds)]),
            );
      const env = {
        ...signerEnv(common, { port: signerPort, internalToken, signerKeys }),
        ...redisEnvOf('signer'),
        ...waitForChains,
        // Nothing fsyncs here, and signs have a test's deadline (see the top of this file).
        REDIS_DURABILITY: 'none',
        MAX_SIGN_DEADLINE_MS: String(TEST_SIGN_DEADLINE_MS),
        ...validity,
        ...opts.env?.signer,
      };
      const at = `http://127.0.0.1:${signerPort}`;
      processes.push(spawnService('signer', { env, readyUrl: `${at}/readyz`, metricsUrl: `${at}/metrics` }));
    }
    const [gatewayPort, opsPort] = [await freePort(), await freePort()];
    const apiKey = `pmm_dev_${randomBytes(24).toString('base64url')}`;
    if (services.includes('gateway')) {
      const whitelist = chainIds.map((id) => key('testUser', id).address);
      const env = {
        ...gatewayEnv(common, { port: gatewayPort, opsPort, signerPort, internalToken, devApiKey: apiKey, whitelist }),
        ...redisEnvOf('gateway'),
        ...waitForChains,
        SIGN_DEADLINE_MS: String(TEST_SIGN_DEADLINE_MS),
        ...opts.env?.gateway,
      };
      const ops = `http://127.0.0.1:${opsPort}`;
      processes.push(spawnService('gateway', { env, readyUrl: `${ops}/readyz`, metricsUrl: `${ops}/metrics` }));
    }

    devnet = await devnetStarting;
    const stack = devnet.stack;
    for (const id of chainIds)
      for (const role of ['apiSigner', 'quoter', 'testUser'] as const)
        if (stack.chains[String(id)]?.[role].privateKey !== key(role, id).privateKey)
          throw new Error(`startSystem: the devnet's ${role} of chain ${id} is not the one the services were given`);
    await opts.beforeServices?.({
      redisUrl,
      redisRecordsUrl,
      chains: stack.chains,
      signerUrl: `http://127.0.0.1:${signerPort}`,
    });
    // The chains file as `npm start` writes it: no service's key in it.
    // Whole or not at all: the services are already waiting for it.
    const chainsFile = publicStack(stack).chains;
    if (opts.references === false) for (const c of Object.values(chainsFile)) c.references = {};
    writeFileSync(`${configFile}.tmp`, `${JSON.stringify({ chains: chainsFile }, null, 2)}\n`, {
      mode: 0o600,
    });
    renameSync(`${configFile}.tmp`, configFile);
    const chain = (id: number): ChainStack => {
      const c = stack.chains[String(id)];
      if (!c) throw new Error(`startSystem: chain ${id} was not started`);
      return c;
    };
    // Started together: the gateway is ready once the signer is (its /readyz asks the signer).
    await Promise.all(processes.map((p) => waitReady(p)));

    return {
      devnet,
      chain,
      redis: stackRedis?.rebuildable,
      stackRedis,
      redisUrl,
      redisRecordsUrl,
      redisEnvOf,
      configFile,
      gateway: { url: `http://127.0.0.1:${gatewayPort}`, opsUrl: `http://127.0.0.1:${opsPort}`, apiKey },
      signer: { url: `http://127.0.0.1:${signerPort}`, internalToken },
      processes,
      processesOf: (service) => processes.filter((p) => p.name.startsWith(service)),
      stop,
    };
  } catch (err) {
    // A devnet still deploying is stopped once it is up.
    devnet ??= await devnetStarting?.catch(() => undefined);
    await stop();
    throw err;
  }
}
