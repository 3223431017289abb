/**
 * `node packages/settlement/dist/cli/risk.js <command>` (`npm run risk -- <command>`): the
 * operator's halts, as the `risk` Redis user. See RISK_USAGE. Beside a running `npm start` it
 * uses that stack's Redis with no settings (core's operator-stack.ts); else REDIS_URL and the
 * other Redis settings, as the services. Changes are confirmed durable (REDIS_DURABILITY, as
 * the signer's audit records) before the command says they are made.
 */
import {
  DURABLE_WRITE_SETTINGS,
  DurableWrites,
  durableCommandTimeoutMs,
  SHARED_SETTINGS,
  REDIS_CONNECTION_SETTINGS,
  createRedis,
  describeRedis,
  durabilityPolicy,
  exitWhenWritten,
  loadConfig,
  operatorEnv,
  redisConnectionUrls,
  redisKeys,
  redisReady,
} from '@pmm/core';
import { RISK_USAGE, runRiskCommand } from './risk-command';
import { reportErrors } from './run-operator-command';

async function main(): Promise<number> {
  const argv = process.argv.slice(2);
  if (argv.length === 0 || ['help', '--help', '-h'].includes(argv[0]!)) {
    process.stdout.write(`${RISK_USAGE}\n`);
    return argv.length === 0 ? 2 : 0;
  }
  const io = {
    out: (text: string) => process.stdout.write(text),
    err: (line: string) => process.stderr.write(`${line}\n`),
  };
  return reportErrors('risk', RISK_USAGE, io, async () => {
    const { env, redisFrom } = operatorEnv('risk');
    const loaded = loadConfig(
      { ...REDIS_CONNECTION_SETTINGS, redisKeyPrefix: SHARED_SETTINGS.redisKeyPrefix, ...DURABLE_WRITE_SETTINGS },
      { env },
    );
    // Halts are records: the records role's server (REDIS_URL when one server holds both).
    const { redisRecordsUrl: redisUrl } = redisConnectionUrls(loaded);
    const policy = durabilityPolicy(loaded, redisUrl);
    const redis = createRedis(redisUrl, {
      role: 'command',
      name: 'operator-risk-cli',
      commandTimeoutMs: durableCommandTimeoutMs(policy),
    });
    try {
      await redisReady(redis, 5_000).catch((err: unknown) => {
        throw new Error(
          `${describeRedis(redisUrl, redisFrom)} is not reachable: ${err instanceof Error ? err.message : String(err)}`,
        );
      });
      return await runRiskCommand(
        argv,
        {
          redis,
          keys: redisKeys(loaded.redisKeyPrefix),
          durability: new DurableWrites(redis, policy),
        },
        { out: (line) => io.out(`${line}\n`), err: io.err },
      );
    } finally {
      redis.disconnect();
    }
  });
}

// Exits only once the output is written: a pipe to a slow reader must get every line.
main().then(
  (code) => exitWhenWritten(code),
  (err: unknown) => {
    process.stderr.write(`risk: ${err instanceof Error ? err.message : String(err)}\n`);
    return exitWhenWritten(1);
  },
);
