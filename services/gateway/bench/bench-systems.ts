/**
 * The systems `npm run bench gateway` runs (gateway.bench.ts): the main one as `npm start` runs
 * it (testkit's startSystem: the gateway and the signer from their builds, with the stack's
 * settings) on `npm run bench`'s Redis, and the compared durability modes' on Redis servers of
 * their own (durability-modes.ts); how they are seeded (integrators and keys as the key CLI
 * writes them, the chain's registry and book as the indexer would), profiled (BENCH_PROFILE=1)
 * and stopped.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { redisKeys, type RedisClient } from '@pmm/core';
import { ApiKeyStore, GATEWAY_SETTINGS } from '@pmm/gateway';
import { SIGNER_SETTINGS } from '@pmm/signer';
import { devnetRegistry, publishBookHead, startSystem } from '@pmm/testkit';
import type { ChainStack } from '@pmm/devnet';
import { startModeRedis, type ComparedMode } from './durability-modes';

export const PROFILE = process.env.BENCH_PROFILE === '1';
/** Where the servers write their CPU profiles on exit, when the run is profiled. */
export const PROFILE_DIR =
  process.env.BENCH_CPU_PROF ?? (PROFILE ? mkdtempSync(path.join(tmpdir(), 'bench-cpu-prof-')) : undefined);
/** The environment that makes a server process profile itself (cpu-profile-hook.cjs). */
export const profiled = (name: string): Record<string, string> =>
  PROFILE_DIR
    ? {
        NODE_OPTIONS: `--require "${path.join(__dirname, 'cpu-profile-hook.cjs')}"`,
        BENCH_CPU_PROF: PROFILE_DIR,
        BENCH_CPU_PROF_NAME: name,
      }
    : {};

/** A book of the shape the indexer writes, of block `head`: 3 pairs × 10 levels per side (about 2.5 KB). */
function sampleBook(head: { number: number; timestamp: number }): string {
  const level = (i: number, side: number) => ({
    price: (3000 + side * i * 1.5).toFixed(6),
    amount: (0.25 * (i + 1)).toFixed(8),
  });
  const pairs = [1, 2, 3].map((n) => ({
    baseToken: `0x${String(n).repeat(40)}`,
    quoteToken: '0x833589fcd6edb6e08f4c7c32d4f71b54bda02913',
    bids: Array.from({ length: 10 }, (_, i) => level(i, -1)),
    asks: Array.from({ length: 10 }, (_, i) => level(i, 1)),
  }));
  return JSON.stringify({ chainId: 8453, blockNumber: head.number, blockTime: head.timestamp, pairs });
}

/** The shipped deadlines of a sign (testkit's startSystem gives its test systems 5 s). */
const SHIPPED_DEADLINES = {
  gateway: { SIGN_DEADLINE_MS: String(GATEWAY_SETTINGS.signDeadlineMs.default) },
  signer: { MAX_SIGN_DEADLINE_MS: String(SIGNER_SETTINGS.maxSignDeadlineMs.default) },
};

export const USER = `0x${'ab'.repeat(20)}`;
/**
 * A sign of the devnet's first pair: `sign` without amountIn, `signFirm` with it (then the signer
 * asks the node for the exact amountOut: one eth_call of the router's quote()).
 */
export const signBody = (chain: ChainStack, amountIn?: bigint) =>
  JSON.stringify({
    chainId: 8453,
    tokenIn: chain.quoteToken.address,
    tokenOut: chain.baseTokens[0]!.address,
    fee: '30',
    userAddress: USER,
    ...(amountIn === undefined ? {} : { amountIn: String(amountIn), slippageBps: 50 }),
  });

/** The bench's API keys: one integrator's whose limit is never reached, one's with an exact limit. */
export interface BenchKeys {
  /** `bench`: a billion a minute, reserved from Redis in batches (no Redis call per request). */
  apiKey: string;
  /**
   * `limited`: 1,000 a second, never reached at the paced 100/s it is used at, but exact, as
   * every limit up to 1,000 per window is (the default 600 a minute too): one reservation in
   * Redis per request (the gateway's rate-limiter.ts), a write on the sign path.
   */
  limitedKey: string;
}

/** The bench's integrators and their keys, written as the key CLI writes them (the gateway's ApiKeyStore). */
export async function seed(redis: RedisClient, prefix: string): Promise<BenchKeys> {
  const store = new ApiKeyStore(redis, prefix);
  const issue = async (id: string, rateLimit: { requests: number; windowSeconds: number }) => {
    await store.putIntegrator({
      id,
      name: id,
      whitelist: [USER],
      chains: [],
      rateLimit,
      // Counted as every integrator's signatures are (the signer's default quota applies to
      // all), but never reached, however long BENCH_SECONDS makes the rows.
      dailySignatureQuota: 1_000_000_000,
      disabled: false,
    });
    return (await store.issueKey(id)).apiKey;
  };
  return {
    apiKey: await issue('bench', { requests: 1_000_000_000, windowSeconds: 60 }),
    limitedKey: await issue('limited', { requests: 1_000, windowSeconds: 1 }),
  };
}

/**
 * The devnet chain's registry, and its latest block as the book's head (the firm quotes are
 * pinned to it) with the sample book's body: what the indexer would have written.
 */
export async function seedChain(redis: RedisClient, prefix: string, chain: ChainStack) {
  const keys = redisKeys(prefix);
  await redis.set(keys.pairs(8453), JSON.stringify(devnetRegistry(chain)));
  const head = await publishBookHead(redis, keys, chain);
  await redis.set(keys.book(8453), sampleBook(head));
  return head;
}

/** Settings over a system's own, per service (a variant compared in the same run). */
export interface ExtraEnv {
  gateway?: Record<string, string>;
  signer?: Record<string, string>;
}

/** What stops the systems under test and the modes' Redis, on a failed run too (in reverse order). */
export const stops: (() => Promise<void>)[] = [];
export async function stopEverything(): Promise<void> {
  for (const stop of stops.splice(0).reverse()) await stop();
}

/**
 * The gateway and the signer of one compared durability mode (durability-modes.ts), on the
 * mode's own Redis, seeded as the main system's (with keys of its own): the same requests,
 * answered the same way.
 */
export async function startModeSystem(mode: ComparedMode, prefix: string, extra: ExtraEnv = {}) {
  const redis = await startModeRedis(mode);
  stops.push(redis.stop);
  const seedClient = redis.nodes[0]!;
  let keys: BenchKeys | undefined;
  let chain: ChainStack | undefined;
  const sys = await startSystem({
    chains: [8453],
    blockIntervalMs: 0,
    services: ['signer', 'gateway'],
    redisUrl: redis.url,
    beforeServices: async ({ chains }) => {
      keys = await seed(seedClient, prefix);
      chain = chains['8453']!;
      await seedChain(seedClient, prefix, chain);
    },
    env: {
      signer: {
        REDIS_KEY_PREFIX: prefix,
        ...SHIPPED_DEADLINES.signer,
        ...redis.signerEnv,
        ...profiled(`signer-${mode}`),
        ...extra.signer,
      },
      gateway: {
        REDIS_KEY_PREFIX: prefix,
        ...SHIPPED_DEADLINES.gateway,
        ...profiled(`gateway-${mode}`),
        ...extra.gateway,
      },
    },
  });
  stops.push(() => sys.stop());
  const pid = (service: 'gateway' | 'signer') => sys.processesOf(service)[0]!.child.pid!;
  return {
    redis,
    keys: keys!,
    chain: chain!,
    metricsUrls: [`${sys.gateway.opsUrl}/metrics`, sys.processesOf('signer')[0]!.metricsUrl!],
    port: Number(new URL(sys.gateway.url).port),
    pair: [pid('gateway'), pid('signer')],
  };
}

/**
 * The main system: the gateway and the signer as `npm start` runs them, on `redisUrl` (one
 * server for both Redis roles) under `prefix`, the signer's REDIS_DURABILITY npm start's (auto)
 * unless REDIS_DURABILITY says otherwise; the chain seeded through `redis`. `references: false`:
 * the chains file names no reference feed (reference-rows.ts compares).
 */
export async function startMainSystem(
  redis: RedisClient,
  redisUrl: string,
  prefix: string,
  extra: ExtraEnv = {},
  opts: { references?: false } = {},
) {
  let head: { number: number; hash: string; timestamp: number } | undefined;
  const sys = await startSystem({
    chains: [8453],
    blockIntervalMs: 0,
    services: ['signer', 'gateway'],
    redisUrl,
    ...opts,
    beforeServices: async ({ chains }) => {
      head = await seedChain(redis, prefix, chains['8453']!);
    },
    env: {
      signer: {
        REDIS_KEY_PREFIX: prefix,
        // npm start's (startSystem's tests turn it off; this Redis fsyncs as shipped).
        REDIS_DURABILITY: process.env.REDIS_DURABILITY ?? 'auto',
        ...SHIPPED_DEADLINES.signer,
        ...profiled('signer'),
        ...extra.signer,
      },
      gateway: { REDIS_KEY_PREFIX: prefix, ...SHIPPED_DEADLINES.gateway, ...profiled('gateway'), ...extra.gateway },
    },
  });
  stops.push(() => sys.stop());
  return { sys, head: head! };
}
