/**
 * `node services/gateway/dist/cli/keys.js <command>`: manages API keys and integrators in
 * the Redis named by REDIS_URL / REDIS_KEY_PREFIX (or CONFIG_FILE), else beside a running
 * `npm start` in its Redis (core's operator-stack.ts). See KEYS_USAGE.
 */
import { createRedis, describeRedis, loadConfig, operatorEnv, redisReady } from '@pmm/core';
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
  const config = loadConfig(
    { redisUrl: GATEWAY_SETTINGS.redisUrl, redisKeyPrefix: GATEWAY_SETTINGS.redisKeyPrefix },
    { env },
  );
  const where = describeRedis(config.redisUrl, redisFrom);
  const redis = createRedis(config.redisUrl, { role: 'command', name: 'gateway-keys-cli' });
  try {
    await redisReady(redis, 5_000).catch((err: unknown) => {
      throw new Error(`${where} is not reachable: ${err instanceof Error ? err.message : String(err)}`);
    });
    // Said before anything is written: a key written to the wrong Redis works nowhere.
    if (WRITES.has(argv[0]!))
      process.stderr.write(`keys: writing to ${where}, key prefix "${config.redisKeyPrefix}"\n`);
    return await runKeysCommand(
      argv,
      new ApiKeyStore(redis, config.redisKeyPrefix),
      (line) => process.stdout.write(`${line}\n`),
      { redis, prefix: config.redisKeyPrefix },
    );
  } finally {
    redis.disconnect();
  }
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`error: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  },
);
