/**
 * A signer app over real Redis (random key prefix per fixture) with derived test keys and
 * hand-made pair registries, for the HTTP tests. Nothing here is a pasted key: every key and
 * address is derived from a label.
 */
import { randomBytes } from 'node:crypto';
import type { RequestListener } from 'node:http';
import {
  DAY_MS,
  DurableWrites,
  createDigestSigner,
  createLogger,
  createMetrics,
  createRedis,
  redisKeys,
  redisReady,
  type RedisClient,
  type RedisKeys,
} from '@pmm/core';
import { type DigestSigner, type IntegratorRecord, type PairRegistry, type TokenInfo } from '@pmm/protocol';
import { getAddress, keccak256, toBytes, type Hex } from 'viem';

import {
  IntegratorStore,
  PairRegistryCache,
  RedisAuditTrail,
  createApp,
  type FirmQuotes,
  type SignerDeps,
} from '../../src';
import { NO_REFERENCES } from '../../src/domain/reference-check';

export const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

/** The fields of a /v2 answer to a sign with amountIn, in their JSON order. */
export const FIRM_ANSWER_FIELDS = [
  'verificationData',
  'timestamp',
  'deadline',
  'calldata',
  'amountOut',
  'minAmountOut',
  'blockNumber',
];

/** The block of {@link fixedFirmQuotes}. */
export const FIRM_BLOCK = 1234;

/**
 * A stand-in for the chain's `quote()` where no node runs (the HTTP and use-case tests): twice
 * `amountIn`, gross, at {@link FIRM_BLOCK}. The real source is proven on the devnet
 * (firm-quote.devnet.test.ts) and against a hostile node (firm-quotes.test.ts).
 */
export const fixedFirmQuotes: FirmQuotes = (req) =>
  Promise.resolve({ grossOut: req.amountIn * 2n, blockNumber: FIRM_BLOCK });
export const INTERNAL_TOKEN = `internal-${keccak256(toBytes('signer-test-internal-token')).slice(2, 34)}`;

/** A private key derived from a label (never a pasted key). */
export function testKey(label: string): Hex {
  return keccak256(toBytes(`pmm-signer-test-key-${label}`));
}

/** A deterministic address derived from a label, EIP-55 checksummed. */
export function testAddress(label: string): Hex {
  return getAddress(`0x${keccak256(toBytes(`pmm-signer-test-address-${label}`)).slice(-40)}`);
}

const token = (symbol: string, decimals: number, chainId: number): TokenInfo => ({
  address: testAddress(`${chainId}-${symbol}`),
  symbol,
  decimals,
});

/** Test registries: each chain has its own stablecoin and its own WETH/WBTC addresses. */
export function testRegistry(chainId: number): PairRegistry {
  const quote = { 8453: token('USDC', 6, 8453), 56: token('USDT', 18, 56), 4663: token('USDG', 6, 4663) }[chainId];
  if (!quote) throw new Error(`no test registry for chain ${chainId}`);
  return {
    chainId,
    quoteToken: quote,
    baseTokens: [token('WETH', 18, chainId), token('WBTC', 8, chainId)],
    blockNumber: 100,
    refreshedAt: 1_700_000_000_000,
  };
}

/** Whitelisted user of the test integrators. */
export const USER = testAddress('user');
export const OTHER_USER = testAddress('other-user');

export function integrator(id: string, extra: Partial<IntegratorRecord> = {}): IntegratorRecord {
  return {
    id,
    name: `Integrator ${id}`,
    whitelist: [USER.toLowerCase()],
    chains: [],
    rateLimit: { requests: 0, windowSeconds: 60 },
    disabled: false,
    ...extra,
  };
}

/** Fixed clock of the fixture app: Unix ms (the response timestamp is its seconds). */
export const NOW_MS = 1_700_000_000_987;
/** No halt, always readable (the halts' own tests use a real HaltView). */
export const NO_HALTS: SignerDeps['halts'] = { current: () => [] };
export const NOW_S = 1_700_000_000;

export interface Fixture {
  prefix: string;
  keys: RedisKeys;
  /** What can be rebuilt (the registries); everything when there is no records' server. */
  redis: RedisClient;
  subscriber: RedisClient;
  /** The records' server (integrators, the audit trail, halts): `redis` and `subscriber` unless `redisRecordsUrl`. */
  records: RedisClient;
  recordsSubscriber: RedisClient;
  pairs: PairRegistryCache;
  integrators: IntegratorStore;
  signers: Map<number, DigestSigner>;
  deps: SignerDeps;
  app: RequestListener;
  /** Writes an integrator record (or raw text under `id`); the store's ttl is 0, so the next request sees it. */
  putIntegrator(record: IntegratorRecord | string, id?: string): Promise<void>;
  /** Writes a registry and refreshes the cache at once. */
  putRegistry(registry: PairRegistry): Promise<void>;
  close(): Promise<void>;
}

export interface FixtureOptions {
  /** The Redis; default the shared one (REDIS_URL). An on-chain test passes its system's private Redis. */
  redisUrl?: string;
  /** The records' own server (integrators, the audit trail); default: `redisUrl` holds them. */
  redisRecordsUrl?: string;
  chains?: number[];
  /** Chains whose registry is written at start; default all. */
  registries?: number[];
  originRates?: Record<number, bigint>;
  /** The router validity per chain, seconds; default 60. */
  quoteValiditySeconds?: Record<number, number>;
  maxFee?: bigint;
  /** Signing key per chain; default testKey(`api-signer-<id>`). */
  signerKeys?: Record<number, string>;
  /** Registry written per chain; default testRegistry. */
  registry?: (chainId: number) => PairRegistry;
  /** Whitelist of the default integrator `acme`; default [USER]. */
  whitelist?: string[];
  /** Where log lines go; default: silent. */
  logStream?: NodeJS.WritableStream;
  /** The level of those lines; default info, as the service's default. */
  logLevel?: string;
  /** Clock; default the fixed NOW_MS. */
  now?: () => number;
  /** Overrides applied to the deps before the app is built. */
  override?: (deps: SignerDeps) => SignerDeps;
}

export async function startFixture(opts: FixtureOptions = {}): Promise<Fixture> {
  const chains = opts.chains ?? [8453, 56, 4663];
  const prefix = `pmm-test-${randomBytes(6).toString('hex')}`;
  const keys = redisKeys(prefix);
  const logger = opts.logStream
    ? createLogger({ service: 'signer-test', stream: opts.logStream, level: opts.logLevel })
    : createLogger({ service: 'signer-test', silent: true });
  const redisUrl = opts.redisUrl ?? REDIS_URL;
  const redis = createRedis(redisUrl, { role: 'command', name: 'signer-test' });
  const subscriber = createRedis(redisUrl, { role: 'subscriber', name: 'signer-test-sub' });
  const recordsUrl = opts.redisRecordsUrl ?? redisUrl;
  const [records, recordsSubscriber] =
    recordsUrl === redisUrl
      ? [redis, subscriber]
      : [
          createRedis(recordsUrl, { role: 'command', name: 'signer-test-records' }),
          createRedis(recordsUrl, { role: 'subscriber', name: 'signer-test-records-sub' }),
        ];
  const connections = [...new Set([redis, subscriber, records, recordsSubscriber])];
  await Promise.all(connections.map((c) => redisReady(c)));
  for (const id of opts.registries ?? chains)
    await redis.set(keys.pairs(id), JSON.stringify((opts.registry ?? testRegistry)(id)));
  const pairs = new PairRegistryCache({ redis, subscriber, keys, chains, logger, refreshIntervalMs: 0 });
  await pairs.start();
  // ttl 0: every request reads Redis, so a test can change a record between requests.
  const integrators = new IntegratorStore({ redis: records, keys, ttlMs: 0 });
  const signers = new Map(
    chains.map((id) => [id, createDigestSigner(opts.signerKeys?.[id] ?? testKey(`api-signer-${id}`))]),
  );
  let deps: SignerDeps = {
    logger,
    metrics: createMetrics('signer-test', { defaultMetrics: false }),
    internalToken: INTERNAL_TOKEN,
    servedChains: chains,
    maxFee: opts.maxFee ?? 10_000n,
    signers,
    originRates: new Map(chains.map((id) => [id, opts.originRates?.[id] ?? 0n])),
    quoteValiditySeconds: new Map(chains.map((id) => [id, opts.quoteValiditySeconds?.[id] ?? 60])),
    pairs,
    references: NO_REFERENCES,
    integrators,
    halts: NO_HALTS,
    audit: new RedisAuditTrail({
      keys,
      retentionMs: 180 * DAY_MS,
      durability: DurableWrites.unconfirmed(records),
    }),
    readiness: {
      redis: async () => {
        await redis.ping();
      },
    },
    firmQuotes: fixedFirmQuotes,
    now: opts.now ?? (() => NOW_MS),
    // A test's deadline, not the shipped 750 ms: these tests are about what a sign answers, and
    // a full run's load (an average of 10 to 25 on two cores) made a first firm sign take longer
    // (onchain-stop.devnet). The deadline's tests set theirs (sign-deadline.test.ts).
    maxSignDeadlineMs: 5_000,
  };
  if (opts.override) deps = opts.override(deps);
  const app = createApp(deps);
  const f: Fixture = {
    prefix,
    keys,
    redis,
    subscriber,
    records,
    recordsSubscriber,
    pairs,
    integrators,
    signers,
    deps,
    app,
    async putIntegrator(record, id) {
      const key = keys.integrator(typeof record === 'string' ? (id ?? 'x') : record.id);
      await records.set(key, typeof record === 'string' ? record : JSON.stringify(record));
    },
    async putRegistry(registry) {
      await redis.set(keys.pairs(registry.chainId), JSON.stringify(registry));
      await pairs.refresh(registry.chainId);
    },
    async close() {
      await pairs.close();
      for (const client of new Set([redis, records])) {
        const found = await client.keys(`${prefix}:*`);
        if (found.length > 0) await client.del(...found);
      }
      await Promise.allSettled(connections.map((c) => c.quit()));
    },
  };
  await f.putIntegrator(
    integrator('acme', opts.whitelist ? { whitelist: opts.whitelist.map((a) => a.toLowerCase()) } : {}),
  );
  return f;
}
