/**
 * The processes of the stack and the settings each one starts with: the one definition that
 * `npm start` (scripts/start.mjs) and the tests' system under test
 * (packages/testkit/src/system/system.ts) both use, so that a test runs what `npm start` runs.
 * Each process gets only its own secrets: the signer its signing keys and the internal
 * token, the gateway the internal token and the development key, an indexer its quoter key.
 */
import path from 'node:path';
import { SERVICE_NODE_FLAGS } from '../service/node-runtime';

export type StackService = 'gateway' | 'signer' | 'indexer' | 'ledger';

/** Each service's built entry point, relative to the repository root. */
export const SERVICE_MAIN: Readonly<Record<StackService, string>> = {
  gateway: 'services/gateway/dist/main.js',
  signer: 'services/signer/dist/main.js',
  indexer: 'services/indexer/dist/main.js',
  // Built with the indexer, whose node connection and head guard it shares
  // (docs/decisions/0048-the-makers-ledger-its-own-process-built-with-the-indexer.md).
  ledger: 'services/indexer/dist/ledger-main.js',
};

/**
 * How the stack's Redis keeps data (`npm start`, `npm run bench`): an append-only file fsynced
 * before each answer (the signer checks it, REDIS_DURABILITY, before a signature leaves), no
 * snapshots, and no eviction. The tests' system keeps nothing on disk (testkit's system.ts says why).
 */
export const STACK_REDIS_PERSISTENCE: readonly string[] = [
  '--appendonly',
  'yes',
  '--appendfsync',
  'always',
  '--save',
  '',
  '--maxmemory-policy',
  'noeviction',
];

/**
 * How the stack's Redis of what can be rebuilt keeps data (core's redis-roles.ts): the same, but
 * fsynced once a second, since nothing there waits for a confirmation; a restart still finds
 * its books and rate windows (a crash of the host may lose the last second of them).
 */
export const STACK_REBUILDABLE_REDIS_PERSISTENCE: readonly string[] = STACK_REDIS_PERSISTENCE.map((arg, i, all) =>
  all[i - 1] === '--appendfsync' ? 'everysec' : arg,
);

/** The log level of a started service unless LOG_LEVEL says otherwise (the stack's output stays readable). */
export const STACK_LOG_LEVEL = 'warn';

/** The command line of a service, with the V8 flags production uses. */
export function serviceCommand(service: StackService, root: string): { command: string; args: string[] } {
  return { command: process.execPath, args: [...SERVICE_NODE_FLAGS, path.join(root, SERVICE_MAIN[service])] };
}

/** What every service of one stack shares. */
export interface StackCommon {
  redisUrl: string;
  /** The records' server (core's redis-roles.ts); absent or the same: one server holds both roles. */
  redisRecordsUrl?: string;
  /** The chains file (`{ chains }`), read as CONFIG_FILE. */
  configFile: string;
  chainIds: readonly (string | number)[];
}

function commonEnv(c: StackCommon): Record<string, string> {
  return {
    REDIS_URL: c.redisUrl,
    ...(c.redisRecordsUrl ? { REDIS_RECORDS_URL: c.redisRecordsUrl } : {}),
    CONFIG_FILE: c.configFile,
    SERVED_CHAINS: c.chainIds.join(','),
  };
}

/** An indexer of chain `chainId`, its operator endpoints on `port` (`/readyz` there). */
export function indexerEnv(
  c: StackCommon,
  o: { chainId: string | number; port: number; quoterKey?: string; quoterKeyFile?: string },
): Record<string, string> {
  return {
    ...commonEnv(c),
    CHAIN_ID: String(o.chainId),
    PORT: String(o.port),
    ...(o.quoterKey ? { QUOTER_KEY: o.quoterKey } : {}),
    ...(o.quoterKeyFile ? { QUOTER_KEY_FILE: o.quoterKeyFile } : {}),
  };
}

/**
 * The maker's ledger of chain `chainId`, its operator endpoints on `port` (`/readyz` there). It holds no key.
 * The stack's chains are anvil's, which keeps each transaction's parity traces from mining, with
 * the router's revert data: the ledger traces with them (LEDGER_TRACER=parity), the same calls and
 * reasons as the callTracer's replays, an order of magnitude sooner
 * (docs/decisions/0072-reverted-router-calls-receipts-then-failed-traces.md).
 */
export function ledgerEnv(c: StackCommon, o: { chainId: string | number; port: number }): Record<string, string> {
  return { ...commonEnv(c), CHAIN_ID: String(o.chainId), PORT: String(o.port), LEDGER_TRACER: 'parity' };
}

/** The signer on `port` (`/readyz` there), with its keys (`SIGNER_KEY_<id>`, `QUOTER_KEY_<id>` and the like). */
export function signerEnv(
  c: StackCommon,
  o: { port: number; internalToken: string; signerKeys: Record<string, string> },
): Record<string, string> {
  return { ...commonEnv(c), ...o.signerKeys, PORT: String(o.port), INTERNAL_TOKEN: o.internalToken };
}

/** The gateway on `port`, its operator port on `opsPort` (`/readyz` there), before the signer on `signerPort`. */
export function gatewayEnv(
  c: StackCommon,
  o: {
    port: number;
    opsPort: number;
    signerPort: number;
    internalToken: string;
    /** The development key, whitelisted for `whitelist` (the devnet's test users). */
    devApiKey: string;
    whitelist: readonly string[];
  },
): Record<string, string> {
  return {
    ...commonEnv(c),
    PORT: String(o.port),
    OPS_PORT: String(o.opsPort),
    SIGNER_URL: `http://127.0.0.1:${o.signerPort}`,
    INTERNAL_TOKEN: o.internalToken,
    DEV_API_KEY: o.devApiKey,
    DEV_API_KEY_WHITELIST: o.whitelist.join(','),
  };
}
