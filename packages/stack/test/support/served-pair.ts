/**
 * A signer and a gateway in this process, each behind core's `listen()` (the servers
 * production uses), over real Redis under a random key prefix, seeded so that no answer has
 * a legitimate reason to be a 5xx: a book and a pair registry on every chain, one integrator
 * with a huge rate limit, its API key, and a whitelisted user.
 */
import { randomBytes } from 'node:crypto';
import { createLogger, createRedis, listen, redisKeys, redisReady, type Served } from '@pmm/core';
import { ApiKeyStore, createApp, gatewayTimeouts, loadGatewayConfig, type Gateway } from '@pmm/gateway';
import { loadSignerConfig, startSigner, type RunningSigner } from '@pmm/signer';

export const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
export const CHAINS = [8453, 56, 4663] as const;
export const INTEGRATOR = 'fuzz';
const INTERNAL_TOKEN = `fuzz-internal-${randomBytes(8).toString('hex')}`;

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
  /** The Redis key prefix of this pair's data. */
  prefix: string;
  gateway: Gateway;
  close(): Promise<void>;
}

export interface ServedPairOptions {
  requestTimeoutMs?: number;
  /** The URL the gateway reaches the signer at, from the signer's port (default: the signer itself). */
  signerUrl?: (signerPort: number) => string;
}

export async function startServedPair(opts: ServedPairOptions = {}): Promise<ServedPair> {
  const prefix = `fuzz-${randomBytes(4).toString('hex')}`;
  const keys = redisKeys(prefix);
  const redis = createRedis(REDIS_URL, { name: 'fuzz-setup' });
  await redisReady(redis);
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
    await redis.set(
      keys.book(chainId),
      JSON.stringify({ chainId, blockNumber: 10, blockTime: Math.floor(Date.now() / 1000), pairs: [] }),
    );
  }
  const store = new ApiKeyStore(redis, prefix);
  await store.putIntegrator({
    id: INTEGRATOR,
    name: INTEGRATOR,
    whitelist: [USER],
    chains: [],
    rateLimit: { requests: 1_000_000_000, windowSeconds: 60 },
    disabled: false,
  });
  const { apiKey, record } = await store.issueKey(INTEGRATOR);

  const silent = createLogger({ service: 'fuzz', silent: true });
  const env: Record<string, string> = {
    PORT: '0',
    REDIS_URL,
    REDIS_KEY_PREFIX: prefix,
    INTERNAL_TOKEN,
    SERVED_CHAINS: CHAINS.join(','),
    LOG_LEVEL: 'error',
  };
  for (const chainId of CHAINS) env[`SIGNER_KEY_${chainId}`] = `0x${randomBytes(32).toString('hex')}`;
  const signer: RunningSigner = await startSigner(loadSignerConfig({ env, file: {} }), silent);
  const requestTimeoutMs = opts.requestTimeoutMs ?? 5_000;
  const gwRedis = createRedis(REDIS_URL, { name: 'fuzz-gw' });
  const subscriber = createRedis(REDIS_URL, { role: 'subscriber', name: 'fuzz-gw-sub' });
  const gateway = createApp({
    // From the declared settings, as main.ts loads them: a new setting needs no edit here.
    config: loadGatewayConfig({
      env: {
        REDIS_KEY_PREFIX: prefix,
        SIGNER_URL: opts.signerUrl?.(signer.served.port) ?? `http://127.0.0.1:${signer.served.port}`,
        INTERNAL_TOKEN,
        SERVED_CHAINS: CHAINS.join(','),
        REQUEST_TIMEOUT_MS: String(requestTimeoutMs),
        BOOK_CACHE_MS: '500',
        KEY_CACHE_MS: '500',
        // Thousands of requests with wrong keys from one address: the failed-authentication
        // limit would answer nearly all of them 429 (gateway/test/keys/auth-failures.test.ts covers it).
        AUTH_FAILURE_LIMIT: '0',
      },
      file: {},
    }),
    redis: gwRedis,
    subscriber,
    logger: silent,
  });
  await gateway.start();
  const served: Served = await listen(gateway.app, 0, '127.0.0.1', {
    timeouts: gatewayTimeouts({ requestTimeoutMs }),
  });
  return {
    gatewayPort: served.port,
    signerPort: signer.served.port,
    apiKey,
    keyId: record.keyId,
    internalToken: INTERNAL_TOKEN,
    prefix,
    gateway,
    async close() {
      served.server.closeAllConnections();
      await served.close();
      await gateway.close();
      signer.served.server.closeAllConnections();
      await signer.close();
      gwRedis.disconnect();
      subscriber.disconnect();
      const left = await redis.keys(`${prefix}:*`);
      if (left.length > 0) await redis.del(...left);
      redis.disconnect();
    },
  };
}
