// `npm start` (after ensure.mjs): the whole stack on the local default, each part a separate
// process, started in dependency order and announced when ready:
//   Redis (REDIS_URL and REDIS_RECORDS_URL, else two private redis-servers: the records, and what
//   can be rebuilt) → devnet (three chains, the market moving) →
//   one indexer per chain → one ledger per chain → signer → gateway; then it prints the gateway URL, a development API key and curl
//   examples.
// What it writes, next to the stack file (.local/ by default; the folder and every file in it
// readable by their owner only):
//   stack.json   the operator's: { configFile, redis: { url, recordsUrl }, chains (devnet only), gateway:
//                { url, apiKey }, console: { url }, metrics: { gateway, signer, indexer-<id>: /metrics URL } };
//                configFile and redis from the moment Redis and the chains are up (operator commands
//                find the stack there), the rest once the gateway is ready.
//   chains.json  (devnet) the chains file every service reads as CONFIG_FILE: no service's key in
//                it (the devnet test users' wallet keys are, for the demo).
//   redis/       the private records' Redis: its data (append-only file fsynced before each answer,
//                so integrators, keys and the audit trail survive restarts and crashes) and
//                redis.conf with its users (redis-acl.ts: the default user off, an
//                administrator, one per role), their passwords generated at each start (as
//                hashes); the administrator's URL is stack.json's redis.recordsUrl (never on a
//                command line).
//   redis-rebuildable/  the private Redis of what can be rebuilt (books, rate limits…), with the
//                same users; fsynced once a second; its administrator's URL is redis.url.
// Secrets: each process gets only its own, by environment: the signer its signing keys, the quoter keys (firm quotes) and
// INTERNAL_TOKEN, the gateway INTERNAL_TOKEN and DEV_API_KEY, each indexer its chain's quoter
// key; a secret of this script's own environment reaches only the services that declare it
// (stackEnv below), and Redis and the chains none. Redis, the indexers, the signer and the
// gateway are supervised (scripts/lib/supervisor.mjs): a part that dies is logged and started
// again with backoff while the rest keeps serving. The devnet chains are not restarted (a new
// chain would have lost its state); `npm start` again for a fresh devnet.
// Ctrl-C / SIGTERM stops everything it started within 10 s.
//
// Real chains instead of the devnet: set STACK_CONFIG to a config file with the `chains` map
// (see docs/configuration.md) and provide the keys by environment: SIGNER_KEY_<id>,
// QUOTER_KEY_<id> (or their _FILE forms). Ports: GATEWAY_PORT (default 8080), SIGNER_PORT
// (8081), OPS_PORT (9080); `STACK_PORTS=free` picks free ports for everything (tests).
// STACK_FILE moves the stack description (default .local/stack.json).
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { root } from './lib/pnpm.mjs';
import { assertRedisServer, freePort, persistentRedisArgs, waitForRedis } from './lib/redis.mjs';
import { supervise } from './lib/supervisor.mjs';

const require = createRequire(import.meta.url);
const log = (msg) => console.log(`[stack] ${msg}`);
/** Supervised parts, in start order. */
const parts = [];
const cleanups = [];
let stopping = false;

const freePorts = process.env.STACK_PORTS === 'free';
const port = async (envName, fallback) =>
  process.env[envName] ? Number(process.env[envName]) : freePorts ? freePort() : fallback;

// What each process runs and the settings it gets: one definition, shared with the tests'
// system under test (packages/core/src/stack/stack-processes.ts).
const { serviceCommand, STACK_LOG_LEVEL, indexerEnv, ledgerEnv, signerEnv, gatewayEnv } = require(
  path.join(root, 'packages/core/dist/stack/stack-processes.js'),
);

/** This script's environment as it was given: the secrets below are then removed from process.env. */
const startEnv = { ...process.env };
/**
 * Each secret of this environment reaches only the processes of the services that declare it
 * (packages/core/src/stack/stack-secrets.ts, from the services' built settings); the rest of the
 * environment reaches every process. Withheld from all: REDIS_URL and REDIS_RECORDS_URL (every
 * service gets the stack's), SECRETS_DIR (a folder of every secret), QUOTER_KEY_<id> (the signer gets them all, each indexer its
 * chain's as QUOTER_KEY) and, when the stack runs its own Redis, the Redis credentials (each
 * process connects as its own user).
 */
function stackEnv() {
  const { splitStackEnv } = require(path.join(root, 'packages/core/dist/stack/stack-secrets.js'));
  const { REDIS_CONNECTION_SETTINGS } = require(path.join(root, 'packages/core/dist/settings/shared-settings.js'));
  const { KNOWN_CHAIN_IDS } = require(path.join(root, 'packages/protocol/dist/index.js'));
  const { GATEWAY_SETTINGS } = require(path.join(root, 'services/gateway/dist/config.js'));
  const { SIGNER_SETTINGS, chainSettings } = require(path.join(root, 'services/signer/dist/config.js'));
  const { INDEXER_SETTINGS } = require(path.join(root, 'services/indexer/dist/config.js'));
  const { LEDGER_SETTINGS } = require(path.join(root, 'services/indexer/dist/ledger/ledger-config.js'));
  const privateRedis = !startEnv.REDIS_URL;
  const redisCredentials = new Set(Object.values(REDIS_CONNECTION_SETTINGS).flatMap((s) => [s.env, `${s.env}_FILE`]));
  const withheld = (name) =>
    name === 'REDIS_URL' ||
    name === 'REDIS_RECORDS_URL' ||
    name === 'SECRETS_DIR' ||
    /^QUOTER_KEY_\d+(_FILE)?$/.test(name) ||
    (privateRedis && redisCredentials.has(name));
  return splitStackEnv(
    startEnv,
    {
      gateway: [GATEWAY_SETTINGS],
      signer: [SIGNER_SETTINGS, ...KNOWN_CHAIN_IDS.map((id) => chainSettings(id))],
      indexer: [INDEXER_SETTINGS],
      ledger: [LEDGER_SETTINGS],
    },
    withheld,
  );
}
const { shared: sharedEnv, secrets: ownSecrets } = stackEnv();
// What this script starts itself (Redis, the devnet's chains) inherits its environment: from
// here on, only what every process may have.
for (const name of Object.keys(process.env)) if (!(name in sharedEnv)) delete process.env[name];

/** Makes `dir` (created if missing) and everything in it readable by its owner only. */
function ownerOnly(dir) {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  chmodSync(dir, 0o700);
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const at = path.join(dir, entry.name);
    if (entry.isDirectory()) ownerOnly(at);
    else if (entry.isFile() && (statSync(at).mode & 0o077) !== 0) chmodSync(at, 0o600);
  }
}

/** Writes `file` whole at mode 600 through a random, exclusively created temporary name. */
const { replaceFile: writePrivate } = require(path.join(root, 'packages/core/dist/cli/replace-file.js'));

/** The private Redis's administrator (every right): the stack owner's, in stack.json's redis.url. */
const REDIS_ADMIN_USER = 'admin';

/**
 * The users of the private Redis servers (packages/core/src/redis/redis-acl.ts), each with a password
 * generated now (into `passwords`): the default user off, the administrator (an ACL user,
 * not `requirepass`: no password is a configuration parameter), one user per role. Returns the
 * `user` lines for redis.conf, the same for both servers. The gateway may seed the development
 * key; an indexer user per chain of the registry.
 */
function redisUsers(admin, passwords) {
  const { redisStackUsers, stackAclFile } = require(path.join(root, 'packages/core/dist/redis/redis-acl.js'));
  for (const { user } of redisStackUsers()) passwords[user] = randomBytes(24).toString('base64url');
  return stackAclFile(passwords, { prefix: process.env.REDIS_KEY_PREFIX || undefined, devKey: true, admin });
}

function startProcess(name, service, env, readyUrl) {
  const part = supervise({
    name,
    ...serviceCommand(service, root),
    options: {
      cwd: root,
      env: { ...sharedEnv, ...ownSecrets[service], LOG_LEVEL: process.env.LOG_LEVEL ?? STACK_LOG_LEVEL, ...env },
      stdio: ['ignore', 'inherit', 'inherit'],
    },
    ready: () => waitReady(name, readyUrl, 60_000, false),
    log,
    shuttingDown: () => stopping,
  });
  parts.push(part);
  return part;
}

async function waitReady(name, url, timeoutMs = 60_000, announce = true) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (stopping) return;
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(1_000) });
      if (res.ok) {
        if (announce) log(`${name} ready`);
        return;
      }
    } catch {
      // not up yet
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`${name} not ready after ${timeoutMs / 1000} s (${url})`);
}

async function stop(code) {
  if (stopping) return;
  stopping = true;
  log('stopping');
  // Services first (they drain), then the devnet, then Redis last (the services use it to the end).
  const redisParts = parts.filter((p) => p.name.startsWith('redis'));
  await Promise.all(parts.filter((p) => !redisParts.includes(p)).map((p) => p.stop()));
  for (const cleanup of cleanups.reverse()) await cleanup();
  await Promise.all(redisParts.map((p) => p.stop()));
  log('stopped');
  process.exit(code);
}
process.on('SIGINT', () => void stop(0));
process.on('SIGTERM', () => void stop(0));

async function main() {
  const stackFile = process.env.STACK_FILE ?? path.join(root, '.local', 'stack.json');
  const stackDir = path.dirname(stackFile);
  // Created owner-only; an existing folder (STACK_FILE may sit anywhere) is left as it is:
  // every file written in it is mode 600, and the Redis data folder is made owner-only.
  mkdirSync(stackDir, { recursive: true, mode: 0o700 });
  /** What stack.json records (see the top of this file), written as the parts come up. */
  const stack = {};
  const saveStack = () => writePrivate(stackFile, `${JSON.stringify(stack, null, 2)}\n`);
  // The development key of the previous run, kept (with the Redis data) so that it stays valid.
  let previousApiKey;
  try {
    previousApiKey = JSON.parse(readFileSync(stackFile, 'utf8')).gateway?.apiKey;
  } catch {
    // first run
  }

  // 1. Redis: REDIS_URL (and REDIS_RECORDS_URL), else two private servers with the same users,
  //    their passwords generated now (in redis.conf as hashes, not on the command line `ps` shows):
  //    the records (<stack file folder>/redis: the audit trail, keys, integrators, halts, the
  //    ledger; every write fsynced before its answer) and what can be rebuilt
  //    (<stack file folder>/redis-rebuildable: books, registries, mids, rate limits, stream slots;
  //    fsynced once a second). core's redis-roles.ts says which key is which.
  let redisUrl = startEnv.REDIS_URL;
  let recordsUrl = startEnv.REDIS_URL ? startEnv.REDIS_RECORDS_URL || startEnv.REDIS_URL : undefined;
  /** Each process's own Redis user on each server (the private Redis only), by process name. */
  const roleUrls = {};
  const recordsRoleUrls = {};
  if (!redisUrl) {
    assertRedisServer();
    const admin = { user: REDIS_ADMIN_USER, password: randomBytes(24).toString('base64url') };
    const passwords = {};
    const aclFile = redisUsers(admin, passwords);
    const { STACK_REDIS_PERSISTENCE, STACK_REBUILDABLE_REDIS_PERSISTENCE } = require(
      path.join(root, 'packages/core/dist/stack/stack-processes.js'),
    );
    const startServer = async (name, folder, persistence, urls) => {
      const dir = path.join(stackDir, folder);
      ownerOnly(dir);
      const conf = path.join(dir, 'redis.conf');
      const redisPort = await freePort();
      writePrivate(conf, aclFile);
      const server = supervise({
        name,
        // umask 077: the append-only files it creates are its owner's only, like their folder.
        command: 'sh',
        args: [
          '-c',
          'umask 077 && exec redis-server "$@"',
          'redis-server',
          ...persistentRedisArgs(redisPort, dir, conf, persistence),
        ],
        // Its own process group: Ctrl-C in a terminal, or `timeout`, signals the whole group, and
        // Redis would quit at once while the services still drain through it (each logging its
        // lost connection). It stops last, from stop().
        options: { stdio: 'ignore', detached: true },
        ready: () => waitForRedis(redisPort, 10_000, admin),
        log,
        shuttingDown: () => stopping,
      });
      parts.push(server);
      await server.ready();
      for (const [user, password] of Object.entries(passwords))
        urls[user] = `redis://${user}:${password}@127.0.0.1:${redisPort}`;
      const shown = path.relative(root, dir);
      log(`${name}: data kept in ${shown.startsWith('..') ? dir : shown}`);
      return `redis://${REDIS_ADMIN_USER}:${admin.password}@127.0.0.1:${redisPort}`;
    };
    [recordsUrl, redisUrl] = await Promise.all([
      startServer('redis', 'redis', STACK_REDIS_PERSISTENCE, recordsRoleUrls),
      startServer('redis-rebuildable', 'redis-rebuildable', STACK_REBUILDABLE_REDIS_PERSISTENCE, roleUrls),
    ]);
  }
  const masked = (url) => url.replace(/\/\/[^@]*@/, '//***@');
  log(
    recordsUrl === redisUrl
      ? `redis ready at ${masked(redisUrl)}`
      : `redis ready: records at ${masked(recordsUrl)}, rebuildable data at ${masked(redisUrl)}`,
  );
  /** The Redis URLs of process `name`: its own user on the private servers, else REDIS_URL and REDIS_RECORDS_URL. */
  const redisOf = (name) => ({
    REDIS_URL: roleUrls[name] ?? redisUrl,
    REDIS_RECORDS_URL: recordsRoleUrls[name] ?? recordsUrl,
  });

  // 2. Chains: the devnet, or the operator's config file.
  let configFile = process.env.STACK_CONFIG;
  const keys = {};
  if (!configFile) {
    const { startDevnet, publicStack, DEFAULT_BLOCK_INTERVAL_MS, DEFAULT_MARKET, marketFromEnv } = require(
      path.join(root, 'packages/devnet/dist/index.js'),
    );
    const ports = {};
    const defaults = { 8453: 8545, 56: 8546, 4663: 8547 };
    // With STACK_PORTS=free the devnet picks its own ports: it can pick again if another process
    // takes one before the node binds it.
    for (const id of Object.keys(defaults))
      if (process.env[`DEVNET_PORT_${id}`] || !freePorts) ports[id] = await port(`DEVNET_PORT_${id}`, defaults[id]);
    const blockIntervalMs = {};
    for (const id of Object.keys(defaults))
      blockIntervalMs[id] = Number(process.env[`DEVNET_BLOCK_MS_${id}`] ?? DEFAULT_BLOCK_INTERVAL_MS[id]);
    log('starting the devnet (chains 8453, 56, 4663)');
    // The market moves (DEVNET_MARKET=off for a still one), so books, the console and the demo move.
    const market = marketFromEnv(process.env, DEFAULT_MARKET);
    const devnet = await startDevnet({ ports, blockIntervalMs, market, log: (m) => log(`devnet: ${m}`) });
    cleanups.push(() => devnet.stop());
    for (const [id, chain] of Object.entries(devnet.stack.chains)) {
      log(`chain ${id} ready at ${chain.rpcUrl}`);
      keys[`SIGNER_KEY_${id}`] = chain.apiSigner.privateKey;
      keys[`QUOTER_KEY_${id}`] = chain.quoter.privateKey;
    }
    // Every service reads the chains; none of them reads another's key there.
    const { chains } = publicStack(devnet.stack);
    configFile = path.join(stackDir, 'chains.json');
    writePrivate(configFile, `${JSON.stringify({ chains }, null, 2)}\n`);
    stack.chains = chains;
  }
  stack.configFile = path.resolve(configFile);
  // `url`: the stack owner's (every right); `roles`: what `keys`, `audit`/`settle` and `risk` use.
  const operatorRoles = (urls) => ({ keys: urls.keys, operator: urls.operator, risk: urls.risk });
  stack.redis = {
    url: redisUrl,
    recordsUrl,
    ...(roleUrls.keys ? { roles: operatorRoles(roleUrls), recordsRoles: operatorRoles(recordsRoleUrls) } : {}),
  };
  saveStack();
  const config = JSON.parse(readFileSync(configFile, 'utf8'));
  const chainIds = Object.keys(config.chains);
  const common = { redisUrl, redisRecordsUrl: recordsUrl, configFile, chainIds };
  // Every process's Prometheus endpoint, for a local Prometheus and the alert rules' test.
  const metricsUrls = {};

  // 3. One indexer per chain, started together (they are independent).
  await Promise.all(
    chainIds.map(async (id) => {
      const opsPort = await freePort();
      const quoterKey = keys[`QUOTER_KEY_${id}`] ?? startEnv[`QUOTER_KEY_${id}`];
      const readyUrl = `http://127.0.0.1:${opsPort}/readyz`;
      metricsUrls[`indexer-${id}`] = `http://127.0.0.1:${opsPort}/metrics`;
      startProcess(
        `indexer ${id}`,
        'indexer',
        {
          ...indexerEnv(common, {
            chainId: id,
            port: opsPort,
            quoterKey,
            quoterKeyFile: startEnv[`QUOTER_KEY_${id}_FILE`],
          }),
          ...redisOf(`indexer-${id}`),
        },
        readyUrl,
      );
      await waitReady(`indexer ${id}`, readyUrl);
    }),
  );

  // 3b. The maker's ledger, one per chain (no key: it reads the chains and the audit trail).
  await Promise.all(
    chainIds.map(async (id) => {
      const opsPort = await freePort();
      const readyUrl = `http://127.0.0.1:${opsPort}/readyz`;
      metricsUrls[`ledger-${id}`] = `http://127.0.0.1:${opsPort}/metrics`;
      startProcess(
        `ledger ${id}`,
        'ledger',
        { ...ledgerEnv(common, { chainId: id, port: opsPort }), ...redisOf(`ledger-${id}`) },
        readyUrl,
      );
      await waitReady(`ledger ${id}`, readyUrl);
    }),
  );

  // 4. Signer and gateway, sharing a fresh internal token.
  const internalToken = startEnv.INTERNAL_TOKEN ?? randomBytes(32).toString('base64url');
  const signerPort = await port('SIGNER_PORT', 8081);
  // The devnet's keys; the operator's (real chains) are among the signer's own secrets.
  // QUOTER_KEY_<id> (withheld from every process above): the signer's firm quotes (a sign with
  // amountIn) authorise the router's quote() with the chain's quoter key, as its indexer does.
  const signerKeys = {};
  for (const id of chainIds) {
    if (keys[`SIGNER_KEY_${id}`]) signerKeys[`SIGNER_KEY_${id}`] = keys[`SIGNER_KEY_${id}`];
    const quoterKey = keys[`QUOTER_KEY_${id}`] ?? startEnv[`QUOTER_KEY_${id}`];
    const quoterKeyFile = startEnv[`QUOTER_KEY_${id}_FILE`];
    if (quoterKey) signerKeys[`QUOTER_KEY_${id}`] = quoterKey;
    if (quoterKeyFile) signerKeys[`QUOTER_KEY_${id}_FILE`] = quoterKeyFile;
  }
  const signerReady = `http://127.0.0.1:${signerPort}/readyz`;
  metricsUrls.signer = `http://127.0.0.1:${signerPort}/metrics`;
  startProcess(
    'signer',
    'signer',
    { ...signerEnv(common, { port: signerPort, internalToken, signerKeys }), ...redisOf('signer') },
    signerReady,
  );
  await waitReady('signer', signerReady);

  const gatewayPort = await port('GATEWAY_PORT', 8080);
  const opsPort = await port('OPS_PORT', 9080);
  const apiKey = startEnv.DEV_API_KEY ?? previousApiKey ?? `pmm_dev_${randomBytes(24).toString('base64url')}`;
  const whitelist = Object.values(config.chains)
    .map((c) => c.testUser?.address)
    .filter(Boolean);
  const gatewayReady = `http://127.0.0.1:${opsPort}/readyz`;
  startProcess(
    'gateway',
    'gateway',
    {
      ...gatewayEnv(common, {
        port: gatewayPort,
        opsPort,
        signerPort,
        internalToken,
        devApiKey: apiKey,
        whitelist,
      }),
      ...redisOf('gateway'),
    },
    gatewayReady,
  );
  await waitReady('gateway', gatewayReady);

  const url = `http://127.0.0.1:${gatewayPort}`;
  stack.gateway = { url, apiKey };
  // The operator console, on the gateway's private operator port (no API key).
  const consoleUrl = `http://127.0.0.1:${opsPort}/console`;
  stack.console = { url: consoleUrl };
  metricsUrls.gateway = `http://127.0.0.1:${opsPort}/metrics`;
  stack.metrics = metricsUrls;
  saveStack();
  const first = config.chains['8453'] ?? Object.values(config.chains)[0];
  const base = first.baseTokens?.[0]?.address ?? '<baseToken>';
  const quote = first.quoteToken?.address ?? '<quoteToken>';
  const user = first.testUser?.address ?? '<yourWhitelistedAddress>';
  const thousand =
    first.quoteToken?.decimals === undefined
      ? '<amountInWei>'
      : (1000n * 10n ** BigInt(first.quoteToken.decimals)).toString();
  console.log(`
The stack is up. Gateway: ${url}
Operator console (books, readiness, sign rate): ${consoleUrl}
Development API key (whitelisted for each chain's devnet test user): ${apiKey}

  curl -s -H 'X-API-KEY: ${apiKey}' '${url}/v2/price?chainId=${first.chainId}'

  curl -s -X POST -H 'X-API-KEY: ${apiKey}' -H 'Content-Type: application/json' ${url}/v2/swap/sign \\
    -d '{"chainId":${first.chainId},"tokenIn":"${quote}","tokenOut":"${base}","fee":"10","userAddress":"${user}","amountIn":"${thousand}"}'

Demo swap on every chain: npm run demo     Stop: Ctrl-C
`);
}

main().catch((err) => {
  console.error(`[stack] ${err instanceof Error ? err.message : String(err)}`);
  void stop(1);
});
