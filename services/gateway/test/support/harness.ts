/**
 * Test harness: real Redis (REDIS_URL) under a random key prefix per test file, gateways built
 * with createApp, API keys written through the real ApiKeyStore, and `call()` which awaits a
 * supertest request and validates the response against the OpenAPI document.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { createLogger, createRedis, encodeChainUpdate, redisKeys, redisReady, type RedisClient } from '@pmm/core';
import { type IntegratorRecord } from '@pmm/protocol';
import {
  ApiKeyStore,
  createApp,
  hashApiKey,
  type Gateway,
  type GatewayAppConfig,
  type GatewayDeps,
} from '@pmm/gateway';
import { assertContract } from './contract';

export const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

/** Awaits a supertest request and checks the response against the OpenAPI document. */
export async function call(test: request.Test): Promise<request.Response> {
  const res = await test;
  const t = test as unknown as { method: string; url: string };
  const url = new URL(t.url);
  assertContract(t.method, url.pathname + url.search, res);
  return res;
}

/** A book as the indexer writes it (chainId first), for `chainId`. */
export function bookBody(chainId: number, blockNumber = 100, pairs: unknown[] = defaultPairs()): string {
  return JSON.stringify({ chainId, blockNumber, blockTime: 1_767_225_600 + blockNumber, pairs });
}

function defaultPairs(): unknown[] {
  return [
    {
      baseToken: '0x4200000000000000000000000000000000000006',
      quoteToken: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913',
      bids: [
        { price: '3012.45', amount: '1.5' },
        { price: '3011.9', amount: '2.25' },
      ],
      asks: [{ price: '3013.1', amount: '1.5' }],
    },
  ];
}

export interface Harness {
  prefix: string;
  redis: RedisClient;
  keys: ReturnType<typeof redisKeys>;
  store: ApiKeyStore;
  /** Builds a started gateway on this prefix (closed by cleanup). */
  gateway(config?: Partial<GatewayAppConfig>, deps?: Partial<GatewayDeps>): Promise<Gateway>;
  /** Creates an integrator (defaults: all chains, generous limit) and returns a fresh key for it. */
  apiKey(integrator?: Partial<IntegratorRecord>): Promise<string>;
  /**
   * Writes a book and announces it on book-updated, as the indexer does, then waits until
   * every gateway of this harness serves it (pub/sub delivery is asynchronous).
   */
  putBook(chainId: number, body?: string): Promise<string>;
  /** Deletes a book and announces it, then waits until no gateway serves it. */
  dropBook(chainId: number): Promise<void>;
  /** Starts an HTTP server for an app (closed by cleanup); returns its base URL. */
  listen(app: Gateway['app']): Promise<string>;
  cleanup(): Promise<void>;
}

export function baseConfig(prefix: string, over: Partial<GatewayAppConfig> = {}): GatewayAppConfig {
  return {
    redisKeyPrefix: prefix,
    signerUrl: 'http://127.0.0.1:9',
    internalToken: 'test-internal-token-0123456789',
    servedChains: [8453, 56, 4663],
    corsOrigins: [],
    requestTimeoutMs: 10_000,
    // Not the default 400 ms: on a loaded machine the deadline must not decide tests of other
    // things (the deadline's own tests set theirs).
    signDeadlineMs: 5_000,
    signerMaxInFlight: 64,
    signBodyLimit: 16 * 1024,
    defaultRateLimit: 600,
    defaultRateWindowSeconds: 60,
    bookCacheMs: 500,
    keyCacheMs: 500,
    streamsPerKey: 10,
    streamHeartbeatMs: 15_000,
    streamLeaseMs: 15_000,
    // Off here: tests send many wrong keys from one address (auth-failures.test.ts turns it on).
    authFailureLimit: 0,
    trustedProxies: [],
    opsAllowedHosts: [],
    opsToken: undefined,
    consoleMaxViewers: 20,
    ...over,
  };
}

export async function harness(redisUrl = REDIS_URL): Promise<Harness> {
  const prefix = `gwtest-${randomUUID().slice(0, 8)}`;
  const keys = redisKeys(prefix);
  const redis = createRedis(redisUrl, { name: 'test' });
  await redisReady(redis);
  const store = new ApiKeyStore(redis, prefix);
  const toClose: (() => Promise<void>)[] = [];
  const gateways: Gateway[] = [];
  const until = async (ok: () => Promise<boolean>) => {
    const started = Date.now();
    while (!(await ok())) {
      if (Date.now() - started > 3_000) throw new Error('harness: gateways did not see the book change');
      await new Promise((r) => setTimeout(r, 5));
    }
  };
  const seen = async (chainId: number, body: string | null) => {
    for (const gw of gateways) {
      const entry = await Promise.resolve(gw.books.get(chainId)).catch(() => undefined);
      if (entry === undefined) return false;
      if ((entry === null ? null : entry.v2.toString('utf8')) !== body) return false;
    }
    return true;
  };
  let n = 0;
  return {
    prefix,
    redis,
    keys,
    store,
    async gateway(config = {}, deps = {}) {
      const gwRedis = createRedis(redisUrl, { name: 'gw' });
      const subscriber = createRedis(redisUrl, { role: 'subscriber', name: 'gw-sub' });
      await redisReady(gwRedis);
      const gw = createApp({
        config: baseConfig(prefix, config),
        redis: gwRedis,
        subscriber,
        logger: createLogger({ service: 'gateway', silent: true }),
        ...deps,
      });
      await gw.start();
      gateways.push(gw);
      toClose.push(async () => {
        await gw.close();
        gwRedis.disconnect();
        subscriber.disconnect();
      });
      return gw;
    },
    async apiKey(integrator = {}) {
      const id = integrator.id ?? `int${++n}`;
      await store.putIntegrator({
        id,
        name: id,
        whitelist: [],
        chains: [],
        rateLimit: { requests: 100_000, windowSeconds: 60 },
        disabled: false,
        ...integrator,
      });
      const { apiKey } = await store.issueKey(id);
      return apiKey;
    },
    async putBook(chainId, body = bookBody(chainId)) {
      await redis.set(keys.book(chainId), body);
      await redis.publish(keys.updates(chainId), encodeChainUpdate({ type: 'book', chainId, blockNumber: 0 }));
      await until(() => seen(chainId, body));
      return body;
    },
    async dropBook(chainId) {
      await redis.del(keys.book(chainId));
      await redis.publish(keys.updates(chainId), encodeChainUpdate({ type: 'book', chainId, blockNumber: 0 }));
      await until(() => seen(chainId, null));
    },
    async listen(app) {
      const server: Server = createServer(app);
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
      toClose.push(
        () =>
          new Promise<void>((r) => {
            server.close(() => r());
            server.closeAllConnections();
          }),
      );
      return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    },
    async cleanup() {
      for (const close of toClose.reverse()) await close();
      const all = await redis.keys(`${prefix}:*`);
      if (all.length > 0) await redis.del(...all);
      redis.disconnect();
    },
  };
}

export { hashApiKey };
