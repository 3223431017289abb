/**
 * The unused limit's firm signatures (firm-signatures.ts) on a real Redis stream written as the
 * signer writes it: each firm signature judged once the ledger's time is past its deadline, used
 * when a swap or a reverted call was attributed to its request, unused otherwise; quote-only,
 * undated and unattributed signatures, and those signed before the ledger saw the chain, are not
 * judged; a reorg undoes the calls and the judgements of the orphaned blocks.
 */
import { randomUUID } from 'node:crypto';
import {
  AUDIT_ENTRY_FIELD,
  auditRecordJson,
  createRedis,
  redisKeys,
  redisReady,
  type AuditRecord,
  type RedisClient,
} from '@pmm/core';
import { sampleAuditRecord, sampleLedgerEntry, sampleLedgerRevert } from '@pmm/testkit';
import { FirmSignatures } from '../../src/ledger/firm-signatures';

const url = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const keys = redisKeys(`pmm-firm-${randomUUID().slice(0, 8)}`);
let redis: RedisClient;
const T = 1_800_000_000;

/** A firm signature of acme signed at T + `second`, valid 60 s. */
let n = 0;
const firm = (second: number, over: Partial<AuditRecord> = {}) =>
  sampleAuditRecord(++n, {
    integratorId: 'acme',
    time: (T + second) * 1000,
    timestamp: T + second,
    deadline: T + second + 60,
    amountOut: '1000',
    ...over,
  });

async function signed(...records: AuditRecord[]): Promise<void> {
  for (const r of records) await redis.xadd(keys.audit(8453), '*', AUDIT_ENTRY_FIELD, auditRecordJson(r));
}

beforeAll(async () => {
  redis = createRedis(url, { name: 'firm-signatures-test' });
  await redisReady(redis);
});
afterAll(async () => {
  await redis.del(keys.audit(8453));
  redis.disconnect();
});
beforeEach(() => redis.del(keys.audit(8453)));

const fateOf = (fates: { requestId: string; unused: boolean }[], r: AuditRecord) =>
  fates.find((f) => f.requestId === r.requestId)?.unused;

describe('FirmSignatures', () => {
  it('behavior: judged once past the deadline: used by a swap or a reverted call of its request, else unused', async () => {
    const swapped = firm(1);
    const reverted = firm(2);
    const unused = firm(3);
    const quoteOnly = firm(4, { amountOut: undefined });
    const undated = firm(5, { deadline: undefined });
    const nobody = firm(6, { integratorId: '' });
    const early = firm(-100);
    const tracker = new FirmSignatures(redis, keys.audit(8453), 3_600);
    // The ledger saw the chain from T − 70: a call window (a minute before signing) of T − 160 began before it.
    tracker.start(0, T - 70, []);
    await signed(early, swapped, reverted, unused, quoteOnly, undated, nobody);
    tracker.add([sampleLedgerEntry(10, T + 5, { requestId: swapped.requestId })]);
    tracker.add([sampleLedgerRevert(11, T + 6, { requestId: reverted.requestId })]);
    // The ledger's time at the first deadline: nothing final yet.
    expect(await tracker.judge(11, T + 61)).toEqual([]);
    const fates = await tracker.judge(12, T + 70);
    expect(fates.map((f) => [f.requestId, f.unused, f.blockNumber, f.deadline])).toEqual([
      [swapped.requestId, false, 12, swapped.deadline],
      [reverted.requestId, false, 12, reverted.deadline],
      [unused.requestId, true, 12, unused.deadline],
    ]);
    // Judged once.
    expect(await tracker.judge(13, T + 80)).toEqual([]);
  });

  it('behavior: a reorg forgets the calls of the orphaned blocks and judges again what was judged in them', async () => {
    const r = firm(1);
    const tracker = new FirmSignatures(redis, keys.audit(8453), 3_600);
    tracker.start(0, 0, []);
    await signed(r);
    tracker.add([sampleLedgerEntry(20, T + 62, { requestId: r.requestId })]);
    expect(fateOf(await tracker.judge(20, T + 62), r)).toBe(false);
    tracker.rollback(19);
    expect(fateOf(await tracker.judge(20, T + 63), r)).toBe(true);
  });
});
