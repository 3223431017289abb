// `npm start` (after ensure.mjs): the whole stack on the local default, each part a separate
// process, started in dependency order and announced when ready:
//   Redis (REDIS_URL, else a private redis-server) → devnet (three chains) → one indexer per
//   chain → signer → gateway; then it prints the gateway URL, a development API key and curl
//   examples, and records `gateway: { url, apiKey }` in .local/stack.json.
// Ctrl-C / SIGTERM stops everything it started within 10 s.
//
// Real chains instead of the devnet: set STACK_CONFIG to a config file with the `chains` map
// (see docs/configuration.md) and provide the keys by environment: SIGNER_KEY_<id>,
// QUOTER_KEY_<id> (or their _FILE forms). Ports: GATEWAY_PORT (default 8080), SIGNER_PORT
// (8081), OPS_PORT (9080); `STACK_PORTS=free` picks free ports for everything (tests).
// STACK_FILE moves the stack description (default .local/stack.json).
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { root } from './lib/pnpm.mjs';
import { freePort, startPrivateRedis } from './lib/redis.mjs';

const require = createRequire(import.meta.url);
const log = (msg) => console.log(`[stack] ${msg}`);
const children = [];
const cleanups = [];
let stopping = false;

const freePorts = process.env.STACK_PORTS === 'free';
const port = async (envName, fallback) =>
  process.env[envName] ? Number(process.env[envName]) : freePorts ? freePort() : fallback;

// The V8 flags production uses (packages/core/src/node-runtime.ts).
const { SERVICE_NODE_FLAGS } = require(path.join(root, 'packages/core/dist/node-runtime.js'));

function startProcess(name, script, env) {
  const child = spawn(process.execPath, [...SERVICE_NODE_FLAGS, path.join(root, script)], {
    cwd: root,
    env: { ...process.env, LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn', ...env },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  child.on('exit', (code, signal) => {
    if (!stopping) {
      console.error(`[stack] ${name} exited unexpectedly (${signal ?? code}); stopping the stack`);
      void stop(1);
    }
  });
  children.push({ name, child });
  return child;
}

async function waitReady(name, url, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (stopping) return;
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(1_000) });
      if (res.ok) {
        log(`${name} ready`);
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
  const exits = children.map(
    ({ child }) =>
      new Promise((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once('exit', resolve);
        child.kill('SIGTERM');
      }),
  );
  const killer = setTimeout(() => children.forEach(({ child }) => child.kill('SIGKILL')), 8_000);
  await Promise.all(exits);
  clearTimeout(killer);
  for (const cleanup of cleanups.reverse()) await cleanup();
  log('stopped');
  process.exit(code);
}
process.on('SIGINT', () => void stop(0));
process.on('SIGTERM', () => void stop(0));

async function main() {
  const stackFile = process.env.STACK_FILE ?? path.join(root, '.local', 'stack.json');
  mkdirSync(path.dirname(stackFile), { recursive: true });

  // 1. Redis
  let redisUrl = process.env.REDIS_URL;
  if (!redisUrl) {
    const redis = await startPrivateRedis();
    cleanups.push(() => redis.stop());
    redisUrl = redis.url;
  }
  log(`redis ready at ${redisUrl.replace(/\/\/[^@]*@/, '//***@')}`);

  // 2. Chains: the devnet, or the operator's config file.
  let configFile = process.env.STACK_CONFIG;
  const keys = {};
  if (!configFile) {
    const { startDevnet, DEFAULT_BLOCK_INTERVAL_MS } = require(path.join(root, 'packages/devnet/dist/index.js'));
    const ports = {};
    const defaults = { 8453: 8545, 56: 8546, 4663: 8547 };
    for (const id of Object.keys(defaults)) ports[id] = await port(`DEVNET_PORT_${id}`, defaults[id]);
    const blockIntervalMs = {};
    for (const id of Object.keys(defaults))
      blockIntervalMs[id] = Number(process.env[`DEVNET_BLOCK_MS_${id}`] ?? DEFAULT_BLOCK_INTERVAL_MS[id]);
    log('starting the devnet (chains 8453, 56, 4663)');
    const devnet = await startDevnet({ ports, blockIntervalMs, stackFile, log: (m) => log(`devnet: ${m}`) });
    cleanups.push(() => devnet.stop());
    for (const [id, chain] of Object.entries(devnet.stack.chains)) {
      log(`chain ${id} ready at ${chain.rpcUrl}`);
      keys[`SIGNER_KEY_${id}`] = chain.apiSigner.privateKey;
      keys[`QUOTER_KEY_${id}`] = chain.quoter.privateKey;
    }
    configFile = stackFile;
  }
  const config = JSON.parse(readFileSync(configFile, 'utf8'));
  const chainIds = Object.keys(config.chains);
  const common = { REDIS_URL: redisUrl, CONFIG_FILE: configFile, SERVED_CHAINS: chainIds.join(',') };

  // 3. One indexer per chain, started together (they are independent).
  await Promise.all(
    chainIds.map(async (id) => {
      const opsPort = await freePort();
      const quoterKey = keys[`QUOTER_KEY_${id}`] ?? process.env[`QUOTER_KEY_${id}`];
      startProcess(`indexer ${id}`, 'services/indexer/dist/main.js', {
        ...common,
        CHAIN_ID: id,
        PORT: String(opsPort),
        ...(quoterKey ? { QUOTER_KEY: quoterKey } : {}),
        ...(process.env[`QUOTER_KEY_${id}_FILE`] ? { QUOTER_KEY_FILE: process.env[`QUOTER_KEY_${id}_FILE`] } : {}),
      });
      await waitReady(`indexer ${id}`, `http://127.0.0.1:${opsPort}/readyz`);
    }),
  );

  // 4. Signer and gateway, sharing a fresh internal token.
  const internalToken = process.env.INTERNAL_TOKEN ?? randomBytes(32).toString('base64url');
  const signerPort = await port('SIGNER_PORT', 8081);
  const signerKeys = {};
  for (const id of chainIds) if (keys[`SIGNER_KEY_${id}`]) signerKeys[`SIGNER_KEY_${id}`] = keys[`SIGNER_KEY_${id}`];
  startProcess('signer', 'services/signer/dist/main.js', {
    ...common,
    ...signerKeys,
    PORT: String(signerPort),
    INTERNAL_TOKEN: internalToken,
  });
  await waitReady('signer', `http://127.0.0.1:${signerPort}/readyz`);

  const gatewayPort = await port('GATEWAY_PORT', 8080);
  const opsPort = await port('OPS_PORT', 9080);
  const apiKey = process.env.DEV_API_KEY ?? `pmm_dev_${randomBytes(24).toString('base64url')}`;
  const whitelist = Object.values(config.chains)
    .map((c) => c.testUser?.address)
    .filter(Boolean);
  startProcess('gateway', 'services/gateway/dist/main.js', {
    ...common,
    PORT: String(gatewayPort),
    OPS_PORT: String(opsPort),
    SIGNER_URL: `http://127.0.0.1:${signerPort}`,
    INTERNAL_TOKEN: internalToken,
    DEV_API_KEY: apiKey,
    DEV_API_KEY_WHITELIST: whitelist.join(','),
  });
  await waitReady('gateway', `http://127.0.0.1:${opsPort}/readyz`);

  const url = `http://127.0.0.1:${gatewayPort}`;
  if (configFile === stackFile) {
    const stack = JSON.parse(readFileSync(stackFile, 'utf8'));
    stack.gateway = { url, apiKey };
    writeFileSync(stackFile, JSON.stringify(stack, null, 2) + '\n', { mode: 0o600 });
  }
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
