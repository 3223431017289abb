/**
 * `node services/gateway/dist/cli/keys.js <command>`: manages API keys and integrators in
 * the Redis named by REDIS_URL / REDIS_KEY_PREFIX (or CONFIG_FILE), else beside a running
 * `npm start` in its Redis (core's operator-stack.ts). See KEYS_USAGE.
 *
 * A write command's output (a new key above all) is printed only once its writes are confirmed
 * durable, by the same rule as the signer's audit records (REDIS_DURABILITY, core's
 * durable-writes.ts): a key handed to an integrator must survive a Redis crash or fail-over.
 * Unconfirmed, the command prints nothing of it and exits 1 (the write may or may not remain:
 * `keys list` tells).
 */
import {
  DURABLE_WRITE_SETTINGS,
  DurableWrites,
  durableCommandTimeoutMs,
  createRedis,
  describeRedis,
  durabilityPolicy,
  exitWhenWritten,
  loadConfig,
  redisConnectionUrls,
  operatorEnv,
  REDIS_CONNECTION_SETTINGS,
  redisReady,
} from '@pmm/core';
import { GATEWAY_SETTINGS } from '../config';
import { ApiKeyStore } from '../keys/api-key-store';
import { KEYS_USAGE, runKeysCommand } from '../keys/keys-command';

/** The commands that write to Redis (the others only read). */
const WRITES = new Set(['create', 'update', 'revoke', 'disable', 'enable', 'rotate', 'import']);

async function main(): Promise<number> {
  const argv = process.argv.slice(2);
  if (argv.length === 0 || ['help', '--help', '-h'].includes(argv[0]!)) {
    process.stdout.write(`${KEYS_USAGE}\n`);
    return argv.length === 0 ? 2 : 0;
  }
  const { env, redisFrom } = operatorEnv('keys');
  const loaded = loadConfig(
    {
      ...REDIS_CONNECTION_SETTINGS,
      redisKeyPrefix: GATEWAY_SETTINGS.redisKeyPrefix,
      ...DURABLE_WRITE_SETTINGS,
    },
    { env },
  );
  // Integrators and keys are records: the records role's server (REDIS_URL when one server holds both).
  const config = { ...loaded, redisUrl: redisConnectionUrls(loaded).redisRecordsUrl };
  const where = describeRedis(config.redisUrl, redisFrom);
  const policy = durabilityPolicy(config, config.redisUrl);
  const redis = createRedis(config.redisUrl, {
    role: 'command',
    name: 'gateway-keys-cli',
    commandTimeoutMs: durableCommandTimeoutMs(policy),
  });
  try {
    await redisReady(redis, 5_000).catch((err: unknown) => {
      throw new Error(`${where} is not reachable: ${err instanceof Error ? err.message : String(err)}`);
    });
    // Said before anything is written: a key written to the wrong Redis works nowhere.
    const store = new ApiKeyStore(redis, config.redisKeyPrefix);
    const context = { redis, prefix: config.redisKeyPrefix };
    const print = (line: string) => process.stdout.write(`${line}\n`);
    if (!WRITES.has(argv[0]!)) return await runKeysCommand(argv, store, print, context);
    process.stderr.write(`keys: writing to ${where}, key prefix "${config.redisKeyPrefix}"\n`);
    const durability = new DurableWrites(redis, policy);
    const held: string[] = [];
    const code = await durability
      .run(() => runKeysCommand(argv, store, (line) => held.push(line), context))
      .catch((err: unknown) => {
        throw new Error(
          `the change could not be confirmed durable (${err instanceof Error ? err.message : String(err)}); ` +
            'it may or may not be kept: check with `keys list` and run the command again',
        );
      });
    held.forEach(print);
    return code;
  } finally {
    redis.disconnect();
  }
}

// Exits only once the output is written: a pipe to a slow reader must get every line.
main().then(
  (code) => exitWhenWritten(code),
  (err: unknown) => {
    process.stderr.write(`error: ${err instanceof Error ? err.message : String(err)}\n`);
    return exitWhenWritten(1);
  },
);
