/**
 * How the operator commands (`keys`, `audit`, `settle`, `risk`) find the stack that `npm start` runs
 * beside them: scripts/start.mjs records in its stack file (`.local/stack.json`, mode 600: the
 * Redis URL carries the private Redis's password) the Redis URLs (`redis.url`, and `redis.recordsUrl`
 * for the records' server) and the chains file (`configFile`) it gave the services. With no settings, a command uses those; an explicit REDIS_URL, CONFIG_FILE or CHAINS
 * still wins. Outside a checkout (an image) there is no stack file and nothing changes.
 *
 * No signing or quoter key is ever read from here: the commands need none.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { maskUrlCredentials } from '../settings/secrets';

/** The repository's stack file (this file is packages/core/{src,dist}/stack/operator-stack.*). */
export const DEFAULT_STACK_FILE = path.resolve(__dirname, '..', '..', '..', '..', '.local', 'stack.json');

export interface OperatorEnv {
  /** The environment to load settings from: the process's, completed from the stack file. */
  env: NodeJS.ProcessEnv;
  /** Where the Redis URL comes from, for messages: `REDIS_URL`, the stack file's path, or `default`. */
  redisFrom: string;
}

/**
 * The environment for an operator command: REDIS_URL and CONFIG_FILE from a running `npm start`
 * when unset. The Redis URL is the command's own Redis user there (`role`: `keys` for the key
 * CLI, `operator` for audit and settle, `risk` for the halts; see redis-acl.ts) when the stack
 * recorded one.
 */
export function operatorEnv(role: 'keys' | 'operator' | 'risk', env: NodeJS.ProcessEnv = process.env): OperatorEnv {
  const file = env.STACK_FILE || DEFAULT_STACK_FILE;
  let recorded: { redisUrl?: unknown; redisRecordsUrl?: unknown; configFile?: unknown } | undefined;
  try {
    const stack = JSON.parse(readFileSync(file, 'utf8')) as {
      redis?: {
        url?: unknown;
        recordsUrl?: unknown;
        roles?: Record<string, unknown>;
        recordsRoles?: Record<string, unknown>;
      };
      configFile?: unknown;
    };
    recorded = {
      redisUrl: stack.redis?.roles?.[role] ?? stack.redis?.url,
      redisRecordsUrl: stack.redis?.recordsRoles?.[role] ?? stack.redis?.recordsUrl,
      configFile: stack.configFile,
    };
  } catch {
    // No stack file (no `npm start` here, or an image): the settings alone decide.
  }
  const out: NodeJS.ProcessEnv = { ...env };
  let redisFrom = env.REDIS_URL ? 'REDIS_URL' : 'default';
  if (!env.REDIS_URL && typeof recorded?.redisUrl === 'string') {
    out.REDIS_URL = recorded.redisUrl;
    // The stack's records server with it (one pair: an explicit REDIS_URL takes neither).
    if (!env.REDIS_RECORDS_URL && typeof recorded.redisRecordsUrl === 'string')
      out.REDIS_RECORDS_URL = recorded.redisRecordsUrl;
    redisFrom = path.relative(process.cwd(), file) || file;
  }
  if (!env.CONFIG_FILE && !env.CHAINS && typeof recorded?.configFile === 'string')
    out.CONFIG_FILE = recorded.configFile;
  return { env: out, redisFrom };
}

/** "Redis redis://127.0.0.1:6379 (from .local/stack.json)": which Redis a command talks to. */
export function describeRedis(url: string, from: string): string {
  return `Redis ${maskUrlCredentials(url)} (${from === 'default' ? 'the default' : `from ${from}`})`;
}
