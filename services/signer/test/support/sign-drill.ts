/**
 * Fault drills of the audit trail: the real signer (startSigner, its real config, Redis
 * connections and audit trail) under a paced sign load over HTTP, and the count that matters:
 * every signature a client received has its audit record afterwards.
 */
import { randomBytes } from 'node:crypto';
import {
  AUDIT_ENTRY_FIELD,
  closeRedis,
  createLogger,
  createRedis,
  parseAuditRecord,
  redisKeys,
  redisReady,
} from '@pmm/core';
import type { ChainStack } from '@pmm/devnet';
import {
  devnetRegistry,
  missingRecords,
  pacedSigns,
  publishBookHead,
  type Answered,
  type SignLoad,
} from '@pmm/testkit';
import { loadSignerConfig, startSigner, type RunningSigner } from '../../src';
import { INTERNAL_TOKEN, USER, integrator, testKey, testRegistry } from './fixture';

const CHAIN = 8453;

export interface DrillSigner {
  signer: RunningSigner;
  prefix: string;
  url: string;
  close(): Promise<void>;
}

/**
 * Seeds an integrator and chain 8453's pairs, then starts the signer on `redisUrl` with `env` over
 * the drill's settings. The seed connects as the signer will (its sentinel password, say).
 * With `firm`, the devnet chain 8453 (its node and contracts, no block unless asked): the
 * signer quotes signs with amountIn on it (the chain's quoter key), its pairs are the devnet's,
 * and the chain's latest block is the served book's head (what the indexer would write).
 */
export async function startDrillSigner(
  redisUrl: string,
  env: Record<string, string> = {},
  firm?: ChainStack,
): Promise<DrillSigner> {
  const prefix = `pmm-drill-${randomBytes(4).toString('hex')}`;
  const config = loadSignerConfig({
    env: {
      PORT: '0',
      REDIS_URL: redisUrl,
      REDIS_KEY_PREFIX: prefix,
      INTERNAL_TOKEN,
      SERVED_CHAINS: String(CHAIN),
      SIGNER_KEY_8453: testKey(`api-signer-${CHAIN}`),
      // No daily quota: the drill counts records, not refusals.
      DAILY_SIGNATURE_QUOTA: '0',
      // Every signature answered or withheld counts the same here: a Redis fault that stalls the
      // writes past the sign's deadline must not turn the drill into one of deadlines.
      MAX_SIGN_DEADLINE_MS: '10000',
      // Nor a stall of the loaded machine's CPU into refusals for overload (past 128 signs in
      // flight: a paced 1,000/s held 128 ms): the drills count records, not refusals.
      MAX_SIGNS_IN_FLIGHT: '10000',
      ...(firm && {
        QUOTER_KEY_8453: firm.quoter.privateKey,
        CHAINS: JSON.stringify({ [CHAIN]: { chainId: CHAIN, rpcUrl: firm.rpcUrl, contracts: firm.contracts } }),
      }),
      ...env,
    },
    file: {},
  });
  const keys = redisKeys(prefix);
  const seed = createRedis(config.redisUrl, { name: 'drill-seed' });
  try {
    await redisReady(seed, 15_000);
    await seed.set(keys.integrator('acme'), JSON.stringify(integrator('acme')));
    await seed.set(keys.pairs(CHAIN), JSON.stringify(firm ? devnetRegistry(firm) : testRegistry(CHAIN)));
    if (firm) await publishBookHead(seed, keys, firm);
  } finally {
    await closeRedis(seed);
  }
  const signer = await startSigner(
    config,
    createLogger({ service: 'drill-signer', silent: process.env.DRILL_LOG !== '1', stream: process.stderr }),
  );
  return { signer, prefix, url: `http://127.0.0.1:${signer.served.port}/v2/swap/sign`, close: () => signer.close() };
}

/**
 * The rate of the fault drills (Redis `kill -9`, Sentinel fail-over, Cluster slot migration):
 * the paced rate the durable-signing goal names, so that the drills prove the promise (no
 * answered signature without its record) at the speed production is sized for.
 */
export const DRILL_SIGNS_PER_SECOND = 500;

/** A paced sign load straight to the signer (the gateway's headers: its internal token and the integrator). */
export function signerLoad(url: string, perSecond: number): SignLoad {
  const registry = testRegistry(CHAIN);
  return pacedSigns({
    url,
    perSecond,
    headers: { 'x-internal-token': INTERNAL_TOKEN, 'x-integrator-id': 'acme' },
    body: (i) =>
      JSON.stringify({
        tokenIn: registry.baseTokens[0]!.address,
        tokenOut: registry.quoteToken.address,
        fee: String(1 + (i % 5_000)),
        userAddress: USER,
      }),
  });
}

/**
 * A paced load of firm quotes straight to the signer (the gateway's headers): signs with
 * amountIn on the devnet chain `firm`, each its own amount (a quote of its own at the node,
 * sent with those of the same event-loop turn in one round trip), inside its first ask tier.
 * Each its own fee too, as signerLoad's: the signature covers the rate, not the amount, and the
 * audit trail indexes at most MAX_INDEXED_IDS records under one signature (the drill finds each
 * record by its signature).
 */
export function firmSignerLoad(url: string, perSecond: number, firm: ChainStack): SignLoad {
  const base = 1_000n * 10n ** BigInt(firm.quoteToken.decimals);
  return pacedSigns({
    url,
    perSecond,
    headers: { 'x-internal-token': INTERNAL_TOKEN, 'x-integrator-id': 'acme' },
    body: (i) =>
      JSON.stringify({
        chainId: CHAIN,
        tokenIn: firm.quoteToken.address,
        tokenOut: firm.baseTokens[0]!.address,
        fee: String(1 + (i % 5_000)),
        userAddress: USER,
        amountIn: String(base + BigInt(i)),
        slippageBps: 50,
      }),
  });
}

/** The answered signatures whose audit record (with the same request id) is not in `redisUrl`'s Redis. */
export function lostRecords(redisUrl: string, prefix: string, ok: readonly Answered[]): Promise<Answered[]> {
  return missingRecords({ redisUrl, prefix, chainId: CHAIN }, ok, 'requestId');
}

/** One sign straight to the signer (the gateway's headers, `requestId`, a fee of `fee`): its status and body. */
export async function signOnce(url: string, requestId: string, fee: number): Promise<{ status: number; body: string }> {
  const registry = testRegistry(CHAIN);
  const res = await fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-internal-token': INTERNAL_TOKEN,
      'x-integrator-id': 'acme',
      'x-request-id': requestId,
    },
    body: JSON.stringify({
      tokenIn: registry.baseTokens[0]!.address,
      tokenOut: registry.quoteToken.address,
      fee: String(fee),
      userAddress: USER,
    }),
  });
  return { status: res.status, body: await res.text() };
}

/**
 * The request ids of the chain's audit records on the one node at `url`, as it holds them (a
 * replica of a Cluster master reads its master's slots after READONLY: `clusterReplica`).
 */
export async function auditRequestIdsOn(
  url: string,
  prefix: string,
  { clusterReplica = false }: { clusterReplica?: boolean } = {},
): Promise<Set<string>> {
  const node = createRedis(url, { name: 'drill-audit-reader' });
  try {
    await redisReady(node, 15_000);
    if (clusterReplica) await node.call('READONLY');
    const entries = (await node.xrange(redisKeys(prefix).audit(CHAIN), '-', '+')) as [string, string[]][];
    return new Set(
      entries.map(([, fields]) => parseAuditRecord(fields[fields.indexOf(AUDIT_ENTRY_FIELD) + 1]!).requestId),
    );
  } finally {
    await closeRedis(node);
  }
}
