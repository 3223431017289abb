/**
 * End to end, as a newcomer runs it: the README's start script (scripts/start.mjs, here on
 * free ports and with its own stack file) brings up Redis, the three devnet chains, an
 * indexer per chain, the signer and the gateway; the demo flow then runs on every chain
 * through the SDK (book → sign → approve → swap); SIGINT must stop every process it started.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { runDemo } from '../../../client/examples/demo';
import {
  createRedis,
  redisKeyRole,
  redisKeys,
  redisReady,
  secretEnvNames,
  type RedisClient,
  type StackService,
} from '@pmm/core';
import { GATEWAY_SETTINGS } from '@pmm/gateway';
import { INDEXER_SETTINGS, LEDGER_SETTINGS } from '@pmm/indexer';
import { SIGNER_SETTINGS, chainSettings } from '@pmm/signer';
import { REPO_ROOT, startStack, type StartedStack } from '@pmm/testkit';

function descendants(pid: number): number[] {
  let out: string;
  try {
    out = execFileSync('ps', ['-e', '-o', 'pid=,ppid='], { encoding: 'utf8' });
  } catch {
    return [];
  }
  const children = new Map<number, number[]>();
  for (const line of out.trim().split('\n')) {
    const [p, pp] = line.trim().split(/\s+/).map(Number);
    children.set(pp!, [...(children.get(pp!) ?? []), p!]);
  }
  const all: number[] = [];
  const walk = (p: number) => {
    for (const c of children.get(p) ?? []) {
      all.push(c);
      walk(c);
    }
  };
  walk(pid);
  return all;
}

/** Running, not merely a zombie waiting for a parent (kill(pid, 0) succeeds on zombies). */
const alive = (pid: number) => {
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
};

const cmdline = (pid: number) => {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ');
  } catch {
    return '';
  }
};

/** The environment a process was started with (what it was handed, whatever it did since). */
function environ(pid: number): Record<string, string> {
  const out: Record<string, string> = {};
  for (const entry of readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0')) {
    const eq = entry.indexOf('=');
    if (eq > 0) out[entry.slice(0, eq)] = entry.slice(eq + 1);
  }
  return out;
}

/** Every secret setting each service declares (`X` and `X_FILE`): the processes that may hold it. */
const OWN_SECRETS: Record<StackService, Set<string>> = {
  gateway: secretEnvNames([GATEWAY_SETTINGS]),
  signer: secretEnvNames([SIGNER_SETTINGS, ...[8453, 56, 4663].map((id) => chainSettings(id))]),
  indexer: secretEnvNames([INDEXER_SETTINGS]),
  ledger: secretEnvNames([LEDGER_SETTINGS]),
};
/** Each process connects to the private Redis as its own user: these reach none of them. */
const REDIS_CREDENTIALS = ['REDIS_PASSWORD', 'REDIS_SENTINEL_PASSWORD'].flatMap((n) => [n, `${n}_FILE`]);

/** The first answer of a Redis server to `command` (inline) from a connection that did not log in. */
function withoutPassword(url: string, command: string): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const sock = net.connect(Number(port), hostname, () => sock.write(`${command}\r\n`));
    sock.once('data', (d) => {
      sock.destroy();
      resolve(d.toString().trim());
    });
    sock.once('error', reject);
  });
}

/** A sign on chain 8453 and a price of any chain, through the stack's gateway with its development key. */
function gatewayRequests(
  gateway: { url: string; apiKey: string },
  chain: { quoteToken: { address: string }; baseTokens: { address: string }[]; testUser: { address: string } },
) {
  const headers = { 'X-API-KEY': gateway.apiKey, 'Content-Type': 'application/json' };
  return {
    sign: () =>
      fetch(`${gateway.url}/v2/swap/sign`, {
        method: 'POST',
        headers,
        body: JSON.stringify({
          chainId: 8453,
          tokenIn: chain.quoteToken.address,
          tokenOut: chain.baseTokens[0]!.address,
          fee: '10',
          userAddress: chain.testUser.address,
        }),
      }),
    price: (chainId = 8453) => fetch(`${gateway.url}/v2/price?chainId=${chainId}`, { headers }),
  };
}

const INTERNAL_TOKEN = 'stack-e2e-internal-token-0123456789';
/**
 * The start script's environment holds every secret setting any service declares (X and X_FILE),
 * and its own: QUOTER_KEY_<id> (each indexer's, given to it as QUOTER_KEY) and SECRETS_DIR. The
 * X_FILE paths are never read (X is set). The services' keys are the devnet's all the same: the
 * start script gives them explicitly.
 */
const START_SECRETS: Record<string, string> = Object.fromEntries(
  [
    ...new Set([...OWN_SECRETS.gateway, ...OWN_SECRETS.signer, ...OWN_SECRETS.indexer]),
    ...[8453, 56, 4663].flatMap((id) => [`QUOTER_KEY_${id}`, `QUOTER_KEY_${id}_FILE`]),
  ].map((name) => [
    name,
    name.endsWith('_FILE') ? `/nonexistent/${name.toLowerCase()}` : `${name.toLowerCase()}-stack-e2e-0123456789abcdef`,
  ]),
);
Object.assign(START_SECRETS, {
  INTERNAL_TOKEN,
  DEV_API_KEY: 'pmm_dev_stack_e2e_0123456789abcdef',
  SECRETS_DIR: '/nonexistent-secrets-dir',
});
/** OPS_TOKEN is set: the operator endpoints (metrics, the console) ask for it. */
const OPS_AUTH = { Authorization: `Bearer ${START_SECRETS.OPS_TOKEN}` };

describe('the stack started as the README says', () => {
  let stack: ChildProcess;
  let started: StartedStack;
  const output = () => started.output();
  let stackFile: string;

  beforeAll(async () => {
    // Secrets in the start script's own environment must reach only the processes that use them.
    // A still market: the demo's swap is checked against the book's exact estimate below.
    started = await startStack({ env: { ...START_SECRETS, DEVNET_MARKET: 'off' } });
    stack = started.process;
    stackFile = started.stackFile;
  }, 180_000);

  afterAll(() => {
    if (stack.exitCode === null) stack.kill('SIGKILL');
  });

  it('behavior: announces each part as it becomes ready, then the URL, a key and curl examples', () => {
    for (const part of [
      'redis ready',
      'chain 8453 ready',
      'chain 56 ready',
      'chain 4663 ready',
      'indexer 8453 ready',
      'signer ready',
      'gateway ready',
    ])
      expect(output()).toContain(part);
    expect(output()).toMatch(/Development API key .*: pmm_dev_/);
    expect(output()).toContain("curl -s -H 'X-API-KEY:");
  });

  it("behavior: prints the operator console and records it in stack.json; it streams every chain's book", async () => {
    const { console: consoleEntry } = JSON.parse(readFileSync(stackFile, 'utf8'));
    expect(output()).toContain(`Operator console (books, readiness, sign rate): ${consoleEntry.url}`);
    const page = await fetch(consoleEntry.url, { headers: OPS_AUTH });
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('console/console.js');
    const events = await fetch(`${consoleEntry.url}/events`, {
      headers: OPS_AUTH,
      signal: AbortSignal.timeout(30_000),
    });
    const reader = events.body!.getReader();
    const decoder = new TextDecoder();
    let text = '';
    const booksOf = () => new Set([...text.matchAll(/event: book\ndata: \{"chainId":([0-9]+)/g)].map((m) => m[1]));
    while (booksOf().size < 3 || !text.includes('event: status')) text += decoder.decode((await reader.read()).value);
    await reader.cancel();
    expect([...booksOf()].sort()).toEqual(['4663', '56', '8453']);
  });

  it("behavior: records every process's Prometheus endpoint in stack.json, and each answers", async () => {
    const { metrics } = JSON.parse(readFileSync(stackFile, 'utf8')) as { metrics: Record<string, string> };
    expect(Object.keys(metrics).sort()).toEqual([
      'gateway',
      'indexer-4663',
      'indexer-56',
      'indexer-8453',
      'ledger-4663',
      'ledger-56',
      'ledger-8453',
      'signer',
    ]);
    for (const url of Object.values(metrics)) {
      const res = await fetch(url, { headers: OPS_AUTH });
      expect(res.status).toBe(200);
      expect(await res.text()).toContain('# TYPE ');
    }
  });

  it('behavior: the demo swap succeeds on every chain and pays at least the book estimate', async () => {
    const lines: string[] = [];
    const results = await runDemo(stackFile, (l) => lines.push(l));
    expect(results.map((r) => r.chainId).sort()).toEqual([56, 4663, 8453].sort());
    for (const r of results) {
      expect(r.received).toBeGreaterThan(0n);
      expect(r.received).toBeGreaterThanOrEqual(r.estimated);
    }
  }, 120_000);

  it('behavior: beside it, `npm run risk` (its own Redis user, the stack file alone) halts each scope within a second, prints the signature given just before, and history lists every lever', async () => {
    const { gateway, chains } = JSON.parse(readFileSync(stackFile, 'utf8'));
    const headers = { 'X-API-KEY': gateway.apiKey, 'Content-Type': 'application/json' };
    const sign = (chainId: number, base = 0, amountIn?: string) => {
      const chain = chains[String(chainId)];
      return fetch(`${gateway.url}/v2/swap/sign`, {
        method: 'POST',
        headers,
        body: JSON.stringify({
          chainId,
          tokenIn: chain.quoteToken.address,
          tokenOut: chain.baseTokens[base].address,
          fee: '10',
          userAddress: chain.testUser.address,
          ...(amountIn ? { amountIn } : {}),
        }),
      });
    };
    const codeOf = async (res: Response) =>
      res.status === 200 ? 200 : ((await res.json()) as { error: { code: string } }).error.code;
    /**
     * A sign's answer once it is not a passing refusal: the stack runs its shipped deadline (400
     * ms), which a loaded machine can miss, pauses signing while its read of the halts is stale,
     * and refuses a pair whose book is behind; each is a 503 with Retry-After (other than HALTED),
     * retried as an integrator would. A 200 or HALTED at any try is the answer.
     */
    const settledCodeOf = async (send: () => Promise<Response>) => {
      for (let tries = 1; ; tries++) {
        const res = await send();
        const code = await codeOf(res);
        if (res.status !== 503 || code === 'HALTED' || tries === 5) return code;
        await new Promise((r) => setTimeout(r, Number(res.headers.get('retry-after') ?? 1) * 1_000));
      }
    };
    const riskCommand = [path.join(REPO_ROOT, 'packages/operator/dist/risk/risk.js')];
    const riskEnv = { PATH: process.env.PATH ?? '', STACK_FILE: stackFile };
    const risk = (argv: string[]) => {
      try {
        return {
          stdout: execFileSync(process.execPath, [...riskCommand, ...argv], { env: riskEnv, encoding: 'utf8' }),
        };
      } catch (err) {
        const e = err as { status: number; stdout: string; stderr: string };
        throw new Error(`risk ${argv.join(' ')} exited ${e.status}: ${e.stdout}${e.stderr}`);
      }
    };
    /** `risk halt`, and when it said the halt was made (it then reads the exposure for a second more). */
    const riskHalt = (argv: string[]) =>
      new Promise<{ stdout: string; haltedAt: number }>((resolve, reject) => {
        const child = spawn(process.execPath, [...riskCommand, 'halt', ...argv], { env: riskEnv });
        let stdout = '';
        let haltedAt = 0;
        child.stdout.on('data', (d: Buffer) => {
          stdout += d.toString();
          if (!haltedAt && stdout.startsWith('halted ')) haltedAt = Date.now();
        });
        child.stderr.on('data', (d: Buffer) => (stdout += d.toString()));
        child.on('error', reject);
        child.on('close', (code) =>
          code === 0 && haltedAt
            ? resolve({ stdout, haltedAt })
            : reject(new Error(`risk halt exited ${code}: ${stdout}`)),
        );
      });
    // A firm quote just before the halts: every halt covering it must count it (a refused sign's
    // record is kept too).
    expect(await settledCodeOf(() => sign(8453, 0, '1000000'))).toBe(200);
    const base8453 = chains['8453'].baseTokens[0].address.toLowerCase();
    const levers: { argv: string[]; covered: () => Promise<Response>; outside?: () => Promise<Response> }[] = [
      { argv: ['--chain', '8453'], covered: () => sign(8453), outside: () => sign(56) },
      { argv: ['--chain', '8453', '--pair', base8453], covered: () => sign(8453, 0), outside: () => sign(8453, 1) },
      { argv: ['--integrator', 'dev'], covered: () => sign(4663) },
      { argv: ['--user', chains['8453'].testUser.address.toLowerCase()], covered: () => sign(8453) },
      { argv: ['--all'], covered: () => sign(56) },
    ];
    // A lever left on by a failed step would fail the tests after this one: lifted in the end whatever happens.
    const halted: string[][] = [];
    try {
      for (const lever of levers) {
        halted.push(lever.argv);
        const halt = await riskHalt([...lever.argv, '--reason', 'e2e drill', '--by', 'e2e']);
        expect(halt.stdout).toMatch(/^halted .* by e2e: signing in it stops on every replica within 1 s/);
        // Every lever covers the firm quote (chain 8453, its first pair, the dev integrator, the test user).
        expect(halt.stdout).toMatch(
          /\n {2}provisional: still valid on-chain: [1-9][0-9]* signatures?, amountIn [0-9.]+ USDC/,
        );
        // The halt was made before it said so: a sign a second after that must be refused, and
        // never signed (a 200 at any try fails); an answer outside the scope, signed.
        await new Promise((r) => setTimeout(r, Math.max(0, halt.haltedAt + 1_000 - Date.now())));
        expect([lever.argv.join(' '), await settledCodeOf(lever.covered)]).toEqual([lever.argv.join(' '), 'HALTED']);
        if (lever.outside)
          expect([lever.argv.join(' '), await settledCodeOf(lever.outside)]).toEqual([lever.argv.join(' '), 200]);
        risk(['resume', ...lever.argv, '--reason', 'e2e drill over', '--by', 'e2e']);
        halted.pop();
      }
    } finally {
      for (const argv of halted) {
        try {
          risk(['resume', ...argv, '--reason', 'e2e drill failed', '--by', 'e2e-cleanup']);
        } catch {
          // Not halted after all: nothing to lift.
        }
      }
    }
    const history = risk(['history', '--format', 'json']);
    const events = (JSON.parse(history.stdout) as { action: string; name: string; by: string }[]).filter(
      (e) => e.by === 'e2e',
    );
    expect(events.map((e) => e.action)).toEqual(levers.flatMap(() => ['halt', 'resume']));
    expect(new Set(events.map((e) => e.name)).size).toBe(levers.length);
    // Signing again everywhere.
    expect(await settledCodeOf(() => sign(8453))).toBe(200);
  }, 120_000);

  it('security: each process is handed only its own secrets; no file it reads holds another key; Redis needs its password', async () => {
    const pids = descendants(stack.pid!);
    const of = (script: string) => pids.filter((p) => cmdline(p).includes(`services/${script}/dist/main.js`));
    const [gateway] = of('gateway');
    const [signer] = of('signer');
    const indexers = of('indexer');
    expect(indexers).toHaveLength(3);
    // One ledger per chain, built with the indexer.
    const ledgers = pids.filter((p) => cmdline(p).includes('services/indexer/dist/ledger-main.js'));
    expect(ledgers).toHaveLength(3);
    // Every secret of the start script's environment reaches only the services that declare it
    // (the Redis credentials none: each process connects as its own user); Redis, the chains and
    // anything else it starts get none.
    const running = pids.filter((p) => existsSync(`/proc/${p}/environ`));
    expect(running.filter((p) => /redis-server|anvil/.test(cmdline(p))).length).toBeGreaterThanOrEqual(4);
    const serviceOf = (p: number) =>
      ledgers.includes(p)
        ? ('ledger' as const)
        : (['gateway', 'signer', 'indexer'] as const).find((s) => cmdline(p).includes(`services/${s}/dist/main.js`));
    for (const p of running) {
      const service = serviceOf(p);
      const own = service
        ? [...OWN_SECRETS[service]].filter((n) => n in START_SECRETS && !REDIS_CREDENTIALS.includes(n)).sort()
        : [];
      const held = Object.keys(environ(p))
        .filter((n) => n in START_SECRETS)
        .sort();
      expect({ process: cmdline(p), secrets: held }).toEqual({ process: cmdline(p), secrets: own });
    }
    expect(environ(gateway!).INTERNAL_TOKEN).toBe(INTERNAL_TOKEN);
    // The services' keys are the devnet's, which the start script gives each explicitly.
    const signerEnv = environ(signer!);
    const serviceKeys = [
      ...['8453', '56', '4663'].map((id) => signerEnv[`SIGNER_KEY_${id}`]!),
      ...indexers.map((p) => environ(p).QUOTER_KEY!),
    ];
    for (const key of serviceKeys) expect(key).toMatch(/^0x[0-9a-fA-F]{64}$/);
    expect(new Set(indexers.map((p) => environ(p).QUOTER_KEY)).size).toBe(3);

    // The chains file every service reads, and the operator's stack file: no service key in them.
    const stackDescription = JSON.parse(readFileSync(stackFile, 'utf8'));
    // Each process reaches the private Redis as its own user (one per role), never the owner's.
    const owner = new URL(stackDescription.redis.url);
    // Two servers (core's redis-roles.ts): the records' and what can be rebuilt, the same users on each.
    const recordsOwner = new URL(stackDescription.redis.recordsUrl);
    expect(recordsOwner.host).not.toBe(owner.host);
    expect(recordsOwner.password).toBe(owner.password);
    const userOf = (p: number) =>
      p === gateway
        ? 'gateway'
        : p === signer
          ? 'signer'
          : `${ledgers.includes(p) ? 'ledger' : 'indexer'}-${environ(p).CHAIN_ID}`;
    for (const p of [gateway!, signer!, ...indexers, ...ledgers]) {
      expect(environ(p).CONFIG_FILE).toBe(stackDescription.configFile);
      const url = new URL(environ(p).REDIS_URL!);
      expect({ host: url.host, user: url.username }).toEqual({ host: owner.host, user: userOf(p) });
      expect(url.password.length).toBeGreaterThanOrEqual(32);
      expect(url.password).not.toBe(owner.password);
      const records = new URL(environ(p).REDIS_RECORDS_URL!);
      expect({ host: records.host, user: records.username }).toEqual({ host: recordsOwner.host, user: userOf(p) });
      expect(records.password).toBe(url.password);
    }
    for (const file of [stackDescription.configFile as string, stackFile]) {
      const text = readFileSync(file, 'utf8');
      for (const key of serviceKeys) expect(text.toLowerCase()).not.toContain(key.toLowerCase().replace(/^0x/, ''));
      expect(statSync(file).mode & 0o777).toBe(0o600);
    }

    // The private Redis: an administrator ACL user (its URL is the one operators read, on no
    // command line) and no `requirepass` (no password in the configuration); without logging in,
    // nothing, PING included (the default user is off). Data owner-only.
    const password = owner.password;
    expect(owner.username).toBe('admin');
    expect(password.length).toBeGreaterThanOrEqual(32);
    const servers: [url: string, appendfsync: string][] = [
      [stackDescription.redis.recordsUrl, 'always'],
      [stackDescription.redis.url, 'everysec'],
    ];
    for (const [serverUrl, appendfsync] of servers) {
      expect(await withoutPassword(serverUrl, 'PING')).toMatch(/^-NOAUTH/);
      expect(await withoutPassword(serverUrl, 'GET x')).toMatch(/^-NOAUTH/);
      const asAdmin = createRedis(serverUrl, { name: 'stack-e2e-admin' });
      try {
        await redisReady(asAdmin);
        expect(await asAdmin.call('CONFIG', 'GET', 'requirepass')).toEqual(['requirepass', '']);
        // Only the records pay an fsync per write.
        expect(await asAdmin.call('CONFIG', 'GET', 'appendfsync')).toEqual(['appendfsync', appendfsync]);
      } finally {
        asAdmin.disconnect();
      }
    }
    for (const p of pids) expect(cmdline(p)).not.toContain(password);
    for (const folder of ['redis', 'redis-rebuildable']) {
      const redisDir = path.join(path.dirname(stackFile), folder);
      const modes = (dir: string): number[] =>
        readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
          e.isDirectory()
            ? [statSync(path.join(dir, e.name)).mode, ...modes(path.join(dir, e.name))]
            : [statSync(path.join(dir, e.name)).mode],
        );
      expect(statSync(redisDir).mode & 0o777).toBe(0o700);
      expect(modes(redisDir).filter((m) => (m & 0o077) !== 0)).toEqual([]);
    }
  });

  it('behavior: each Redis holds only its role’s keys; losing every rebuildable key loses nothing owned, and serving resumes', async () => {
    const { redis, gateway, chains } = JSON.parse(readFileSync(stackFile, 'utf8'));
    const servers = {
      records: createRedis(redis.recordsUrl, { name: 'e2e-records' }),
      rebuildable: createRedis(redis.url, { name: 'e2e-rebuildable' }),
    };
    const keysOf = async (client: RedisClient) => (await client.keys('*')).sort();
    try {
      await Promise.all(Object.values(servers).map((client) => redisReady(client)));
      // The demo above signed and swapped on every chain; the ledgers and indexers wrote since.
      const byServer = { records: await keysOf(servers.records), rebuildable: await keysOf(servers.rebuildable) };
      for (const [role, keys] of Object.entries(byServer))
        expect(keys.filter((key) => redisKeyRole(key, 'pmm') !== role)).toEqual([]);
      const prefix = redisKeys('pmm');
      expect(byServer.records).toEqual(
        expect.arrayContaining([
          prefix.audit(8453),
          prefix.ledgerCursor(56),
          prefix.integrator('dev'),
          prefix.apiKeyIndex(),
        ]),
      );
      expect(byServer.rebuildable).toEqual(
        expect.arrayContaining([prefix.book(4663), prefix.pairs(8453), prefix.mids(56)]),
      );

      // What the records hold, counted: every signature's audit record per chain, and the
      // operator's data (integrators, keys, halts) byte for byte.
      const operatorData = async () =>
        Promise.all(
          byServer.records
            .filter((key) => !/:(audit|ledger)/.test(key))
            .map(async (key) => [key, (await servers.records.dumpBuffer(key))?.toString('hex')]),
        );
      const auditLengths = () => Promise.all([8453, 56, 4663].map((id) => servers.records.xlen(prefix.audit(id))));
      const [dataBefore, auditBefore] = [await operatorData(), await auditLengths()];
      expect(auditBefore.every((n) => n > 0)).toBe(true);
      // Everything that can be rebuilt is gone at once (a lost or replaced server).
      await servers.rebuildable.flushall();
      const { sign, price } = gatewayRequests(gateway, chains['8453']);
      // The indexers write the books at their next block and the registries within their refresh.
      const deadline = Date.now() + 90_000;
      let last = '';
      for (;;) {
        const answers = await Promise.all([sign(), price(8453), price(56), price(4663)]).catch(() => []);
        last = answers.map((a) => a.status).join(', ');
        if (answers.length > 0 && answers.every((a) => a.status === 200)) break;
        if (Date.now() > deadline) throw new Error(`not serving again 90 s after the flush (${last}):\n${output()}`);
        await new Promise((r) => setTimeout(r, 500));
      }
      // The records were not touched: one more signature's record on top of what was there.
      const after = await keysOf(servers.records);
      expect(after).toEqual(expect.arrayContaining(byServer.records));
      expect(await operatorData()).toEqual(dataBefore);
      // 8453 signed since (at least once: until every answer was 200); the others hold what they held.
      const auditAfter = await auditLengths();
      expect(auditAfter[0]).toBeGreaterThan(auditBefore[0]!);
      expect(auditAfter.slice(1)).toEqual(auditBefore.slice(1));
    } finally {
      for (const client of Object.values(servers)) client.disconnect();
    }
  }, 120_000);

  it('behavior: a killed part (the signer, the private Redis) is restarted; the development key keeps working', async () => {
    const { gateway, chains } = JSON.parse(readFileSync(stackFile, 'utf8'));
    const pidOf = (needle: string) => descendants(stack.pid!).find((p) => cmdline(p).includes(needle));
    process.kill(pidOf('services/signer/dist/main.js')!, 'SIGKILL');
    // Both servers: the records' and the rebuildable data's.
    const redisServers = descendants(stack.pid!).filter((p) => cmdline(p).startsWith('redis-server'));
    expect(redisServers).toHaveLength(2);
    for (const pid of redisServers) process.kill(pid, 'SIGKILL');

    const { sign, price } = gatewayRequests(gateway, chains['8453']);
    const deadline = Date.now() + 30_000;
    let last = '';
    for (;;) {
      const [p, s] = await Promise.all([price(), sign()]).catch(() => [undefined, undefined]);
      last = `price ${p?.status}, sign ${s?.status}`;
      if (p?.status === 200 && s?.status === 200) break;
      if (Date.now() > deadline) throw new Error(`not serving again after 30 s (${last}):\n${output()}`);
      await new Promise((r) => setTimeout(r, 250));
    }
    expect(output()).toMatch(/signer exited unexpectedly \(SIGKILL\); restarting/);
    expect(output()).toMatch(/redis exited unexpectedly \(SIGKILL\); restarting/);
    expect(output()).toMatch(/redis-rebuildable exited unexpectedly \(SIGKILL\); restarting/);
    expect(output()).not.toContain('stopping');
  }, 60_000);

  it('behavior: SIGINT stops every process it started within 10 seconds', async () => {
    const started = descendants(stack.pid!);
    expect(started.length).toBeGreaterThanOrEqual(8); // redis, 3 nodes, 3 indexers, signer, gateway
    const t0 = Date.now();
    const exited = new Promise<number | null>((resolve) => stack.once('exit', (code) => resolve(code)));
    stack.kill('SIGINT');
    expect(await exited).toBe(0);
    expect(Date.now() - t0).toBeLessThan(10_000);
    // Grandchildren (the devnet nodes' watchdogs) may take a moment after their parent.
    const deadline = Date.now() + 2_000;
    while (started.some(alive) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    const left = started.filter(alive).map((pid) => {
      try {
        return `${pid}: ${readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ')}`;
      } catch {
        return String(pid);
      }
    });
    expect(left).toEqual([]);
  }, 20_000);
});
