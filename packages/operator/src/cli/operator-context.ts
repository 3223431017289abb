/**
 * What the operator commands (`audit`, `settle`, `markouts`) connect to: the deployment's Redis
 * (REDIS_RECORDS_URL, else REDIS_URL; the mid history on REDIS_URL; REDIS_KEY_PREFIX, as the services) and, for on-chain reads, the chain deployments (CHAINS, or
 * the `chains` key of CONFIG_FILE: the devnet's `.local/stack.json` works as it is). With none
 * of these set beside a running `npm start`, its Redis and chains (core's operator-stack.ts).
 */
import {
  chainsSetting,
  createRedis,
  describeRedis,
  loadConfig,
  redisConnectionUrls,
  operatorEnv,
  rebuildableConnection,
  redisKeys,
  redisReady,
  REDIS_CONNECTION_SETTINGS,
  SHARED_SETTINGS,
  type ChainDeployments,
  type RedisClient,
} from '@pmm/core';
import { createChainReader, type ChainReader } from '../chain/chain-reader';
import { AuditReader } from '../audit-trail/audit-reader';
import { LedgerReader } from '../ledger/ledger-reader';

const OPERATOR_SETTINGS = {
  ...REDIS_CONNECTION_SETTINGS,
  redisKeyPrefix: SHARED_SETTINGS.redisKeyPrefix,
};

const CHAINS = chainsSetting(
  'Chain deployments (rpcUrl and the router and helper addresses of each chain) for `audit tx` and `settle`; ' +
    'JSON { "<id>": { chainId, rpcUrl, contracts: { router, helper, verifier } } } or the `chains` key of CONFIG_FILE.',
);

export interface OperatorContext {
  trail: AuditReader;
  /** The maker's ledger and the mid history (`markouts`). */
  ledger: LedgerReader;
  /** Chain ids configured in CHAINS (empty when unset). */
  chainIds: number[];
  chain(chainId: number): { reader: ChainReader; router: string; helper: string };
  close(): void;
}

export async function openOperatorContext(
  name: string,
  processEnv: NodeJS.ProcessEnv = process.env,
): Promise<OperatorContext> {
  const { env, redisFrom } = operatorEnv('operator', processEnv);
  const loaded = loadConfig(OPERATOR_SETTINGS, { env });
  const config = { ...loaded, ...redisConnectionUrls(loaded) };
  let deployments: ChainDeployments | undefined;
  const chainsConfig = (): ChainDeployments => (deployments ??= loadConfig({ chains: CHAINS }, { env }).chains);
  const connections: RedisClient[] = [];
  const disconnect = () => connections.forEach((client) => client.disconnect());
  const reachable = async (client: RedisClient, url: string) => {
    try {
      await redisReady(client, 5_000);
    } catch (err) {
      const hint = redisFrom === 'REDIS_URL' || redisFrom === 'default' ? '' : ' (is `npm start` still running?)';
      throw new Error(
        `${describeRedis(url, redisFrom)} is not reachable${hint}: ${err instanceof Error ? err.message : String(err)}`,
      );
    }
  };
  // The audit trail and the ledger are records.
  const redis: RedisClient = createRedis(config.redisRecordsUrl, { role: 'command', name });
  connections.push(redis);
  try {
    await reachable(redis, config.redisRecordsUrl);
  } catch (err) {
    disconnect();
    throw err;
  }
  // The mid history, which `markouts` alone reads, is on REDIS_URL, reached on first use only:
  // `audit` and `settle` need nothing of that server and keep working while it is down.
  let mids: Promise<RedisClient> | undefined;
  const midsConnection = () =>
    (mids ??= (async () => {
      const client = rebuildableConnection(config, redis, { role: 'command', name: `${name}-mids` });
      if (client === redis) return client;
      connections.push(client);
      await reachable(client, config.redisUrl);
      return client;
    })());
  const readers = new Map<number, ChainReader>();
  let chainIds: number[] = [];
  try {
    chainIds = Object.keys(chainsConfig()).map(Number);
  } catch {
    // CHAINS is only needed for on-chain reads; `audit list` and `audit export` work without it.
  }
  return {
    trail: new AuditReader(redis, redisKeys(config.redisKeyPrefix)),
    ledger: new LedgerReader(redis, midsConnection, redisKeys(config.redisKeyPrefix)),
    chainIds,
    chain(chainId) {
      const d = chainsConfig()[chainId];
      if (!d?.rpcUrl) throw new Error(`chain ${chainId}: no rpcUrl in CHAINS`);
      let reader = readers.get(chainId);
      if (!reader) readers.set(chainId, (reader = createChainReader(chainId, d.rpcUrl)));
      return { reader, router: d.contracts.router, helper: d.contracts.helper };
    },
    close() {
      for (const r of readers.values()) r.close();
      disconnect();
    },
  };
}
