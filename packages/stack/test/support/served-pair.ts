/**
 * A signer and a gateway as `npm start` runs them: processes from their builds with the stack's
 * settings, started by testkit's startSystem on its private Redis, each as its own Redis user on
 * the records' server and the rebuildable one, as `npm start` runs them (no indexer: the chains' devnet
 * is only what the signer checks its quote validity against at start). Redis is seeded before
 * they start so that no answer has a legitimate reason to be a 5xx: a book and a pair registry
 * on every chain, one integrator with a huge rate limit, its API key, and a whitelisted user.
 */
import { randomBytes } from 'node:crypto';
import { DEFAULT_KEY_PREFIX, STACK_LOG_LEVEL, createRedis, gatewayEnv, redisKeys, redisReady } from '@pmm/core';
import { ApiKeyStore } from '@pmm/gateway';
import {
  freePort,
  publishBookHead,
  startService,
  startSystem,
  type PrivateStackRedis,
  type ServiceProcess,
  type System,
} from '@pmm/testkit';

export const CHAINS = [8453, 56, 4663] as const;
export const INTEGRATOR = 'fuzz';

const hexAddress = (label: string, chainId: number) =>
  `0x${Buffer.from(`${label}-${chainId}`.padEnd(20, '.').slice(0, 20), 'latin1').toString('hex')}`;

/** Per chain: the quote token and two base tokens of the seeded registry (lower case). */
export function tokensOf(chainId: number): { quote: string; bases: string[] } {
  return { quote: hexAddress('quote', chainId), bases: [hexAddress('weth', chainId), hexAddress('wbtc', chainId)] };
}

export const USER = '0x70997970c51812dc3a010c7d01b50e0d17dc79c8';

export interface ServedPair {
  gatewayPort: number;
  signerPort: number;
  apiKey: string;
  /** The public id of `apiKey` (what the audit trail records). */
  keyId: string;
  internalToken: string;
  /**
   * The administrator's URLs of the Redis the pair uses (the records' server: integrators, keys,
   * the audit trail; the other: registries, books, rate limits; one URL when one server holds
   * both), and its key prefix (the stack's).
   */
  redisUrl: string;
  redisRecordsUrl: string;
  prefix: string;
  /** The signer's process (a drill stops it under load). */
  signer: ServiceProcess;
  /** The first gateway's process (on `gatewayPort`). */
  gateway: ServiceProcess;
  /** The chains file the services read. */
  configFile: string;
  /**
   * Starts one more gateway replica on the same Redis and signer, as `npm start` runs one (the
   * settings of the first); resolves its process and public port once ready. Stopped by close().
   */
  addGateway(): Promise<{ process: ServiceProcess; port: number }>;
  /** Stops both processes, the devnet and Redis. */
  close(): Promise<void>;
}

export interface ServedPairOptions {
  requestTimeoutMs?: number;
  /**
   * A relay between the gateway and the signer: the gateway is given its URL (SIGNER_URL), and
   * `to` is told the signer's URL before the gateway starts (its readiness check goes through it).
   */
  relay?: { url: string; to(signerUrl: string): void };
  /** A Redis to use instead of startSystem's private one (kept by the caller). */
  redisUrl?: string;
  /** The records' own server (REDIS_RECORDS_URL, kept by the caller); default: `redisUrl` holds them. */
  redisRecordsUrl?: string;
  /** Private servers with the stack's users to use instead of startSystem's (kept by the caller). */
  stackRedis?: PrivateStackRedis;
}

/**
 * Writes the registries and books (on `redisUrl`), the integrator and its key (on the records'
 * server); resolves with the key.
 */
async function seed(
  redisUrl: string,
  recordsUrl: string,
  chains: Readonly<Record<string, { chainId: number; rpcUrl: string }>>,
): Promise<{ apiKey: string; keyId: string }> {
  const keys = redisKeys(DEFAULT_KEY_PREFIX);
  const redis = createRedis(redisUrl, { name: 'served-pair-seed' });
  const records = recordsUrl === redisUrl ? redis : createRedis(recordsUrl, { name: 'served-pair-seed-records' });
  try {
    await Promise.all([redisReady(redis), redisReady(records)]);
    for (const chainId of CHAINS) {
      const { quote, bases } = tokensOf(chainId);
      await redis.set(
        keys.pairs(chainId),
        JSON.stringify({
          chainId,
          quoteToken: { address: quote, symbol: 'Q', decimals: 6 },
          baseTokens: bases.map((address, i) => ({ address, symbol: `B${i}`, decimals: 18 })),
          blockNumber: 1,
          refreshedAt: Date.now(),
        }),
      );
      // The devnet's latest block: a sign with amountIn asks the router for its firm amount there
      // (these tokens are not the router's: PAIR_NOT_FOUND, a 4xx).
      await publishBookHead(redis, keys, chains[String(chainId)]!);
    }
    const store = new ApiKeyStore(records, DEFAULT_KEY_PREFIX);
    await store.putIntegrator({
      id: INTEGRATOR,
      name: INTEGRATOR,
      whitelist: [USER],
      chains: [],
      rateLimit: { requests: 1_000_000_000, windowSeconds: 60 },
      disabled: false,
    });
    const { apiKey, record } = await store.issueKey(INTEGRATOR);
    return { apiKey, keyId: record.keyId };
  } finally {
    redis.disconnect();
    records.disconnect();
  }
}

export async function startServedPair(opts: ServedPairOptions = {}): Promise<ServedPair> {
  let issued: { apiKey: string; keyId: string } | undefined;
  const gatewaySettings = (relay: ServedPairOptions['relay']) => ({
    REQUEST_TIMEOUT_MS: String(opts.requestTimeoutMs ?? 5_000),
    // Thousands of requests with wrong keys from one address: the failed-authentication
    // limit would answer nearly all of them 429 (gateway/test/keys/auth-failures.test.ts covers it).
    AUTH_FAILURE_LIMIT: '0',
    ...(relay ? { SIGNER_URL: relay.url } : {}),
  });
  const system: System = await startSystem({
    chains: CHAINS,
    services: ['signer', 'gateway'],
    ...(opts.redisUrl ? { redisUrl: opts.redisUrl } : {}),
    ...(opts.redisRecordsUrl ? { redisRecordsUrl: opts.redisRecordsUrl } : {}),
    ...(opts.stackRedis ? { stackRedis: opts.stackRedis } : {}),
    beforeServices: async ({ redisUrl, redisRecordsUrl, signerUrl, chains }) => {
      opts.relay?.to(signerUrl);
      issued = await seed(redisUrl, redisRecordsUrl, chains);
    },
    env: { gateway: gatewaySettings(opts.relay) },
  });
  const extra: ServiceProcess[] = [];
  const port = (url: string) => Number(new URL(url).port);
  return {
    gatewayPort: port(system.gateway.url),
    signerPort: port(system.signer.url),
    ...issued!,
    internalToken: system.signer.internalToken,
    redisUrl: system.redisUrl,
    redisRecordsUrl: system.redisRecordsUrl,
    prefix: DEFAULT_KEY_PREFIX,
    signer: system.processesOf('signer')[0]!,
    gateway: system.processesOf('gateway')[0]!,
    configFile: system.configFile,
    async addGateway() {
      const [gatewayPort, opsPort] = [await freePort(), await freePort()];
      const env = {
        ...gatewayEnv(
          {
            redisUrl: system.redisUrl,
            redisRecordsUrl: system.redisRecordsUrl,
            configFile: system.configFile,
            chainIds: [...CHAINS],
          },
          {
            port: gatewayPort,
            opsPort,
            signerPort: port(system.signer.url),
            internalToken: system.signer.internalToken,
            devApiKey: `pmm_dev_${randomBytes(24).toString('base64url')}`,
            whitelist: [],
          },
        ),
        // Its own Redis user, as the first gateway's.
        ...system.redisEnvOf('gateway'),
        LOG_LEVEL: STACK_LOG_LEVEL,
        ...gatewaySettings(opts.relay),
      };
      const process = await startService('gateway', {
        name: `gateway#${extra.length + 1}`,
        env,
        readyUrl: `http://127.0.0.1:${opsPort}/readyz`,
      });
      extra.push(process);
      return { process, port: gatewayPort };
    },
    close: async () => {
      await Promise.all(extra.map((p) => p.stop()));
      await system.stop();
    },
  };
}
