#!/usr/bin/env node
/**
 * `pnpm devnet`: starts the three chains on fixed ports, writes <repo root>/.local/stack.json and
 * stays up until SIGINT/SIGTERM, then stops every node.
 *
 * Environment (all optional):
 *   DEVNET_PORT_<chainId>      port of that chain (defaults 8453 → 8545, 56 → 8546, 4663 → 8547)
 *   DEVNET_BLOCK_MS_<chainId>  block interval in ms (defaults 8453: 2000, 56: 750, 4663: 1000; 0 = automine)
 *   DEVNET_STACK_FILE          where to write the stack description (default <repo root>/.local/stack.json)
 *   DEVNET_HOST                address the nodes bind (default 127.0.0.1; 0.0.0.0 in a container)
 *   DEVNET_ADVERTISED_HOST     host name written into the stack's URLs (default 127.0.0.1; `devnet` in compose)
 *   DEVNET_MARKET              `on` (default): each pair's market takes a random-walk step every block, its curve
 *                              follows and its reference feed publishes it; `off`: still
 *   DEVNET_MARKET_VOLATILITY_BPS  one block's move, standard deviation in bps (default 5)
 *   DEVNET_MARKET_SEED         seed of the walk (default 1)
 *   DEVNET_FEED_DEVIATION_BPS  the reference feeds' deviation threshold in bps (default 15)
 *   DEVNET_FEED_HEARTBEAT_SECONDS  the reference feeds' heartbeat (default 60)
 *   DEVNET_SECRETS_DIR         compose profile: write the devnet-only secrets there (see compose-secrets.ts)
 *                              and add `devApiKeyWhitelist` (every test user) to the stack file
 *
 * `--print-env` prints, instead, the devnet-only keys as environment lines for the services
 * (SIGNER_KEY_<id>, QUOTER_KEY_<id>): public, derived from labels, for running services by hand
 * against the devnet (the compose devnet profile uses DEVNET_SECRETS_DIR instead).
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { KNOWN_CHAIN_IDS } from '@pmm/protocol';
import { devnetKey } from './devnet-keys';
import { writeComposeSecrets } from './compose-secrets';
import { DEFAULT_MARKET, marketFromEnv } from './market-walk';
import { DEFAULT_BLOCK_INTERVAL_MS, startDevnet } from './start-devnet';
import { publicStack, writeStack } from './stack';

const DEFAULT_PORTS: Readonly<Record<number, number>> = { 8453: 8545, 56: 8546, 4663: 8547 };

/** The workspace root: the nearest ancestor holding pnpm-workspace.yaml. */
function repoRoot(): string {
  for (let dir = __dirname; ; dir = path.dirname(dir)) {
    if (existsSync(path.join(dir, 'pnpm-workspace.yaml'))) return dir;
    if (path.dirname(dir) === dir) throw new Error('pnpm-workspace.yaml not found above ' + __dirname);
  }
}

function envInt(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw)) throw new Error(`${name} must be a non-negative integer, got "${raw}"`);
  return Number(raw);
}

function printEnv(): void {
  console.log('# devnet-only keys (public; never use them on a real chain)');
  for (const id of KNOWN_CHAIN_IDS) {
    console.log(`SIGNER_KEY_${id}=${devnetKey('apiSigner', id).privateKey}`);
    console.log(`QUOTER_KEY_${id}=${devnetKey('quoter', id).privateKey}`);
  }
}

async function main(): Promise<void> {
  if (process.argv.includes('--print-env')) return printEnv();
  const started = Date.now();
  const ports: Record<number, number> = {};
  const blockIntervalMs: Record<number, number> = {};
  for (const id of KNOWN_CHAIN_IDS) {
    ports[id] = envInt(`DEVNET_PORT_${id}`, DEFAULT_PORTS[id] ?? 0);
    blockIntervalMs[id] = envInt(`DEVNET_BLOCK_MS_${id}`, DEFAULT_BLOCK_INTERVAL_MS[id] ?? 1000);
  }
  const stackFile = process.env.DEVNET_STACK_FILE || path.join(repoRoot(), '.local', 'stack.json');
  const log = (msg: string): void => console.log(`[devnet] ${msg}`);
  const secretsDir = process.env.DEVNET_SECRETS_DIR || undefined;
  if (secretsDir)
    log(`devnet-only secrets written to ${writeComposeSecrets(secretsDir).length} files in ${secretsDir}`);

  const devnet = await startDevnet({
    ports,
    blockIntervalMs,
    // Written below, without the services' keys (the compose profile's services all read it).
    log,
    market: marketFromEnv(process.env, DEFAULT_MARKET),
    host: process.env.DEVNET_HOST || undefined,
    advertisedHost: process.env.DEVNET_ADVERTISED_HOST || undefined,
  });
  // The signing and quoter keys stay out of the file: each service is given its own (the
  // secrets folders above, or --print-env).
  const stack = publicStack(devnet.stack);
  if (secretsDir) {
    // The gateway reads `devApiKeyWhitelist` from CONFIG_FILE: DEV_API_KEY works for every test user.
    const whitelist = Object.values(devnet.stack.chains).map((c) => c.testUser.address);
    writeStack(stackFile, { ...stack, devApiKeyWhitelist: whitelist } as typeof stack);
  } else writeStack(stackFile, stack);
  log(`all ${KNOWN_CHAIN_IDS.length} chains ready in ${Date.now() - started} ms; stack written to ${stackFile}`);
  log('devnet keys are public and for this devnet only; press Ctrl-C to stop');

  let stopping = false;
  const shutdown = (signal: string): void => {
    if (stopping) return;
    stopping = true;
    log(`${signal}: stopping`);
    devnet.stop().then(
      () => process.exit(0),
      (err: unknown) => {
        console.error('[devnet] stop failed', err);
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', () => shutdown('SIGINT'));
  process.on('SIGTERM', () => shutdown('SIGTERM'));
}

main().catch((err: unknown) => {
  console.error(`[devnet] failed to start: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
