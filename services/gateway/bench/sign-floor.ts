/**
 * The cost floor of one signed quote: the CPU time of the steps no implementation of the sign
 * path can skip, each measured alone in this process (used by gateway.bench.ts, which adds the
 * steps it measures under load: the bare server's answer and one keep-alive HTTP hop).
 *
 * - one secp256k1 signature of a 32-byte digest (the native libsecp256k1 backend the signer uses);
 * - the swap digest: the 192-byte ABI preimage and its keccak-256 (the only hash of a quote);
 * - one audit record written by the signer's own RedisAuditTrail (50 writes in flight as under
 *   the bench's 50 connections, so records share script calls as they do on the sign path):
 *   the client's CPU per record, which is what the signer's process pays (Redis's own CPU is
 *   not counted here).
 *
 * CPU time (process.cpuUsage) rather than wall time: it is what a shared machine disturbs least.
 */
import { randomBytes } from 'node:crypto';
import { DAY_MS, DurableWrites, createDigestSigner, createRedis, redisKeys, redisReady } from '@pmm/core';
import { swapDigest, type SwapQuoteFields } from '@pmm/protocol';
import { RedisAuditTrail } from '@pmm/signer';
import { sampleAuditRecord } from '@pmm/testkit';

export interface FloorStep {
  name: string;
  /** CPU µs of this process per step. */
  cpuUs: number;
}

/** CPU µs per call of `fn`, over `n` calls, after a warm-up. */
function cpuPerCall(n: number, fn: (i: number) => void): number {
  for (let i = 0; i < Math.min(n, 500); i++) fn(i);
  const before = process.cpuUsage();
  for (let i = 0; i < n; i++) fn(i);
  const used = process.cpuUsage(before);
  return (used.user + used.system) / n;
}

/** CPU µs per call of `fn` with `inFlight` calls running at once, over `n` calls. */
async function cpuPerAsyncCall(n: number, inFlight: number, fn: (i: number) => Promise<void>): Promise<number> {
  const run = async (count: number) => {
    let next = 0;
    await Promise.all(
      Array.from({ length: inFlight }, async () => {
        while (next < count) await fn(next++);
      }),
    );
  };
  await run(Math.min(n, 1000));
  const before = process.cpuUsage();
  await run(n);
  const used = process.cpuUsage(before);
  return (used.user + used.system) / n;
}

export async function measureSignFloor(redisUrl: string, prefix: string): Promise<FloorStep[]> {
  const signer = createDigestSigner(`0x${randomBytes(32).toString('hex')}`, { backend: 'libsecp256k1' });
  const fields: SwapQuoteFields = {
    tokenIn: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913',
    tokenOut: '0x4200000000000000000000000000000000000006',
    timestamp: BigInt(Math.floor(Date.now() / 1000)),
    fee: 30n,
    originRate: 0n,
    userAddress: `0x${'ab'.repeat(20)}`,
  };
  const digests = Array.from({ length: 64 }, () => new Uint8Array(randomBytes(32)));
  const sign = cpuPerCall(5000, (i) => signer.sign(digests[i % digests.length]!));
  const digest = cpuPerCall(20000, (i) => swapDigest({ ...fields, fee: BigInt(i % 1000) }));

  const redis = createRedis(redisUrl, { role: 'command', name: 'bench-floor' });
  await redisReady(redis);
  const trail = new RedisAuditTrail({
    keys: redisKeys(prefix),
    retentionMs: DAY_MS,
    durability: DurableWrites.unconfirmed(redis),
  });
  const audit = await cpuPerAsyncCall(20000, 50, (i) => trail.record(sampleAuditRecord(i)));
  redis.disconnect();
  return [
    { name: 'secp256k1 signature (libsecp256k1)', cpuUs: sign },
    { name: 'swap digest (ABI preimage + keccak-256)', cpuUs: digest },
    { name: 'audit record (ioredis, batched script, 50 in flight)', cpuUs: audit },
  ];
}
