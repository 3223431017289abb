/**
 * core's readAuditPage over a real Redis stream: a period's records of one integrator (or user),
 * by the record's own signing time (a stream id a minute off the signer's clock still found), at
 * most `maxScan` entries read and `maxRecords` kept per page, and `next` resuming exactly after
 * the last entry read until the period ends; a cursor before the period reads from its start.
 */
import { randomUUID } from 'node:crypto';
import {
  AUDIT_ENTRY_FIELD,
  auditRecordJson,
  createRedis,
  readAuditPage,
  redisKeys,
  redisReady,
  type AuditPageRequest,
  type RedisClient,
} from '@pmm/core';
import { sampleAuditRecord } from '@pmm/testkit';

const url = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const keys = redisKeys(`pmm-ap-${randomUUID().slice(0, 8)}`);
const T = 1_800_000_000_000;
let redis: RedisClient;

/** Record n: signed at T + n s, by acme when n is even, else beta; stream id 30 s behind the signer's clock. */
const N = 40;
const integratorOf = (n: number) => (n % 2 === 0 ? 'acme' : 'beta');

beforeAll(async () => {
  redis = createRedis(url, { name: 'audit-page-test' });
  await redisReady(redis);
  for (let n = 0; n < N; n++) {
    const record = sampleAuditRecord(n, { time: T + n * 1_000, integratorId: integratorOf(n) });
    await redis.xadd(keys.audit(8453), `${T + n * 1_000 - 30_000}-0`, AUDIT_ENTRY_FIELD, auditRecordJson(record));
  }
});

afterAll(async () => {
  await redis.del(keys.audit(8453));
  redis.disconnect();
});

/** Every page of a request, each page's kept record numbers. */
async function pages(req: Omit<AuditPageRequest, 'after'>): Promise<number[][]> {
  const out: number[][] = [];
  let after: string | undefined;
  do {
    const page = await readAuditPage(redis, keys, { ...req, after });
    out.push(page.entries.map((e) => (e.record.time - T) / 1_000));
    after = page.next;
  } while (after !== undefined && out.length < 100);
  return out;
}

describe('readAuditPage', () => {
  it("behavior: one integrator's records of the period by signing time, the stream's clock 30 s off", async () => {
    const [only] = await pages({
      chainId: 8453,
      integratorId: 'acme',
      fromMs: T + 10_000,
      toMs: T + 20_000,
      maxScan: 1_000,
    });
    expect(only).toEqual([10, 12, 14, 16, 18]);
  });

  it('behavior: at most maxScan entries read per page, next resumes after the last, until the period ends', async () => {
    // 40 entries in the range, 7 read per page: 6 pages, each with at most 4 of beta's 20.
    const found = await pages({ chainId: 8453, integratorId: 'beta', fromMs: T, toMs: T + N * 1_000, maxScan: 7 });
    expect(found.flat()).toEqual(Array.from({ length: 20 }, (_, i) => 2 * i + 1));
    expect(found.length).toBeGreaterThan(5);
    for (const page of found) expect(page.length).toBeLessThanOrEqual(4);
  });

  it('behavior: at most maxRecords kept per page', async () => {
    const found = await pages({ chainId: 8453, fromMs: T, toMs: T + N * 1_000, maxScan: 1_000, maxRecords: 15 });
    expect(found.map((p) => p.length)).toEqual([15, 15, 10]);
    expect(found.flat()).toEqual(Array.from({ length: N }, (_, i) => i));
  });

  it('behavior: a cursor before the period reads from its start; one past it reads nothing', async () => {
    const early = await readAuditPage(redis, keys, {
      chainId: 8453,
      integratorId: 'acme',
      fromMs: T + 30_000,
      toMs: T + 34_000,
      after: '1-0',
      maxScan: 1_000,
    });
    expect(early.entries.map((e) => (e.record.time - T) / 1_000)).toEqual([30, 32]);
    expect(early.next).toBeUndefined();
    const late = await readAuditPage(redis, keys, {
      chainId: 8453,
      fromMs: T,
      toMs: T + 10_000,
      after: `${T + 3_600_000}-0`,
      maxScan: 1_000,
    });
    expect(late).toEqual({ entries: [] });
  });
});
