/**
 * Fault drills of the audit trail: the real signer (startSigner, its real config, Redis
 * connections and audit trail) under a paced sign load over HTTP, and the count that matters:
 * every signature a client received has its audit record afterwards.
 */
import { Agent, request } from 'node:http';
import { randomBytes } from 'node:crypto';
import { decodeAbiParameters, type Hex } from 'viem';
import { createLogger, createRedis, redisKeys, redisReady, type RedisClient } from '@pmm/core';
import { AuditReader } from '@pmm/settlement';
import { loadSignerConfig, startSigner, type RunningSigner } from '../../src';
import { INTERNAL_TOKEN, USER, integrator, testKey, testRegistry } from './fixture';

const CHAIN = 8453;
const VD_TYPES = [{ type: 'uint256' }, { type: 'uint256' }, { type: 'address' }, { type: 'bytes' }] as const;

export interface DrillSigner {
  signer: RunningSigner;
  prefix: string;
  url: string;
  close(): Promise<void>;
}

/** Seeds an integrator and chain 8453's pairs through `redisUrl`, then starts the signer on it. */
export async function startDrillSigner(redisUrl: string, env: Record<string, string> = {}): Promise<DrillSigner> {
  const prefix = `pmm-drill-${randomBytes(4).toString('hex')}`;
  const keys = redisKeys(prefix);
  const seed = createRedis(redisUrl, { name: 'drill-seed' });
  try {
    await redisReady(seed, 15_000);
    await seed.set(keys.integrator('acme'), JSON.stringify(integrator('acme')));
    await seed.set(keys.pairs(CHAIN), JSON.stringify(testRegistry(CHAIN)));
  } finally {
    seed.disconnect();
  }
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
      ...env,
    },
    file: {},
  });
  const signer = await startSigner(
    config,
    createLogger({ service: 'drill-signer', silent: process.env.DRILL_LOG !== '1', stream: process.stderr }),
  );
  return { signer, prefix, url: `http://127.0.0.1:${signer.served.port}/v2/swap/sign`, close: () => signer.close() };
}

export interface Answered {
  requestId: string;
  signature: string;
  timestamp: number;
  /** ms since the load started. */
  at: number;
}

export interface LoadResult {
  sent: number;
  ok: Answered[];
  /** Answers by status ('error' when none came). */
  statuses: Record<string, number>;
}

/** Sends sign requests at `perSecond` until stop(); each one is a different quote (fee). */
export function pacedSigns(
  url: string,
  perSecond: number,
): { stop(): Promise<LoadResult>; started: number; inFlight(): number } {
  const agent = new Agent({ keepAlive: true, maxSockets: 32 });
  const started = Date.now();
  const result: LoadResult = { sent: 0, ok: [], statuses: {} };
  const inFlight = new Set<Promise<void>>();
  const count = (status: string) => (result.statuses[status] = (result.statuses[status] ?? 0) + 1);
  const send = (i: number) => {
    const requestId = `drill-${i}`;
    const body = JSON.stringify({
      tokenIn: testRegistry(CHAIN).baseTokens[0]!.address,
      tokenOut: testRegistry(CHAIN).quoteToken.address,
      fee: String(1 + (i % 5_000)),
      userAddress: USER,
    });
    const done = new Promise<void>((resolve) => {
      const req = request(
        url,
        {
          method: 'POST',
          agent,
          timeout: 10_000,
          headers: {
            'content-type': 'application/json',
            'content-length': Buffer.byteLength(body),
            'x-internal-token': INTERNAL_TOKEN,
            'x-integrator-id': 'acme',
            'x-request-id': requestId,
          },
        },
        (res) => {
          let text = '';
          res.on('data', (d: Buffer) => (text += d.toString()));
          res.on('end', () => {
            count(String(res.statusCode));
            if (res.statusCode === 200) {
              const json = JSON.parse(text) as { verificationData: Hex; timestamp: number };
              const signature = decodeAbiParameters(VD_TYPES, json.verificationData)[3];
              result.ok.push({ requestId, signature, timestamp: json.timestamp, at: Date.now() - started });
            }
            resolve();
          });
          res.on('error', () => resolve());
        },
      );
      req.on('timeout', () => req.destroy(new Error('timeout')));
      req.on('error', () => {
        count('error');
        resolve();
      });
      req.end(body);
    });
    inFlight.add(done);
    void done.then(() => inFlight.delete(done));
  };
  // Paced by the clock, not by answers: a stalled Redis does not slow the arrivals.
  const timer = setInterval(() => {
    const due = Math.floor(((Date.now() - started) * perSecond) / 1000);
    while (result.sent < due) send(result.sent++);
  }, 5);
  return {
    started,
    inFlight: () => inFlight.size,
    async stop() {
      clearInterval(timer);
      await Promise.all([...inFlight]);
      agent.destroy();
      return result;
    },
  };
}

/** The answered signatures whose audit record (with the same request id) is not in `redisUrl`'s Redis. */
export async function missingRecords(redisUrl: string, prefix: string, ok: Answered[]): Promise<Answered[]> {
  const redis: RedisClient = createRedis(redisUrl, { name: 'drill-reader' });
  try {
    await redisReady(redis, 15_000);
    const reader = new AuditReader(redis, redisKeys(prefix));
    const missing: Answered[] = [];
    for (const a of ok) {
      const found = await reader.bySignature(CHAIN, a.signature, a.timestamp);
      if (!found.some((e) => e.record.requestId === a.requestId)) missing.push(a);
    }
    return missing;
  } finally {
    redis.disconnect();
  }
}

/** One line a drill prints: what it counted. */
export function report(name: string, r: LoadResult, missing: number, extra = ''): string {
  const found = r.ok.length - missing;
  return (
    `${name}: sent ${r.sent}, answered 200 ${r.ok.length}, records found ${found}, lost: ${missing}; ` +
    `answers ${JSON.stringify(r.statuses)}${extra ? `; ${extra}` : ''}`
  );
}
