/**
 * `node packages/operator/dist/risk/risk.js <command>` (`npm run risk -- <command>`): the
 * operator's halts, as the `risk` Redis user. See RISK_USAGE. Beside a running `npm start` it
 * uses that stack's Redis with no settings (core's operator-stack.ts); else REDIS_URL and the
 * other Redis settings, as the services: the halts on the records' server (REDIS_RECORDS_URL, else
 * REDIS_URL), the pair registries it checks a scope against on REDIS_URL, reached only when
 * needed. Changes are confirmed durable (REDIS_DURABILITY, as the signer's audit records) before
 * the command says they are made.
 */
import {
  DURABLE_WRITE_SETTINGS,
  DurableWrites,
  durableCommandTimeoutMs,
  SHARED_SETTINGS,
  SIGN_PATH_SETTINGS,
  REDIS_CONNECTION_SETTINGS,
  createRedis,
  describeRedis,
  durabilityPolicy,
  exitWhenWritten,
  loadConfig,
  operatorEnv,
  rebuildableConnection,
  redisConnectionUrls,
  redisKeys,
  redisReady,
  type RedisClient,
} from '@pmm/core';
import { RISK_USAGE, runRiskCommand } from './risk-command';
import { reportErrors } from '../cli/run-operator-command';

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
      {
        ...REDIS_CONNECTION_SETTINGS,
        redisKeyPrefix: SHARED_SETTINGS.redisKeyPrefix,
        requestTimeoutMs: SIGN_PATH_SETTINGS.requestTimeoutMs,
        ...DURABLE_WRITE_SETTINGS,
      },
      { env },
    );
    // Halts are records: the records role's server (REDIS_URL when one server holds both).
    const urls = redisConnectionUrls(loaded);
    const redisUrl = urls.redisRecordsUrl;
    const policy = durabilityPolicy(loaded, redisUrl);
    const redis = createRedis(redisUrl, {
      role: 'command',
      name: 'operator-risk-cli',
      commandTimeoutMs: durableCommandTimeoutMs(policy),
    });
    const reachable = (client: RedisClient, url: string) =>
      redisReady(client, 5_000).catch((err: unknown) => {
        throw new Error(
          `${describeRedis(url, redisFrom)} is not reachable: ${err instanceof Error ? err.message : String(err)}`,
        );
      });
    // The pair registries' server, on first use: a halt must not wait on it (risk-command.ts).
    let registries: Promise<RedisClient> | undefined;
    const connections = [redis];
    try {
      await reachable(redis, redisUrl);
      return await runRiskCommand(
        argv,
        {
          redis,
          registries: () =>
            (registries ??= (async () => {
              const client = rebuildableConnection(urls, redis, { role: 'command', name: 'operator-risk-cli-pairs' });
              if (client !== redis) connections.push(client);
              await reachable(client, urls.redisUrl);
              return client;
            })()),
          keys: redisKeys(loaded.redisKeyPrefix),
          durability: new DurableWrites(redis, policy),
          exposureSettleMs: 1_000 + loaded.requestTimeoutMs,
        },
        { out: (line) => io.out(`${line}\n`), err: io.err },
      );
    } finally {
      for (const client of connections) client.disconnect();
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
