/**
 * The signatures' fates judged live at their deadline (deadline-fates.ts) on a real Redis stream
 * written as the signer writes it: each signature judged once the ledger's time is past its
 * deadline, executed (with the delay from its signed timestamp to its first swap) when a swap was
 * attributed to its request, reverted when only a reverted call was, unused otherwise; undated and
 * unattributed signatures, and those signed before the ledger saw the chain, are not judged; those
 * the run before judged come back replayed; a reorg undoes the calls and the judgements of the
 * orphaned blocks.
 */
import { randomUUID } from 'node:crypto';
import {
  AUDIT_ENTRY_FIELD,
  auditRecordJson,
  ledgerCursorJson,
  ledgerEntryJson,
  createRedis,
  redisKeys,
  redisReady,
  type AuditRecord,
  type RedisClient,
} from '@pmm/core';
import { sampleAuditRecord, sampleLedgerEntry, sampleLedgerRevert } from '@pmm/testkit';
import { DeadlineFates, startFromLedger, type DeadlineFate } from '../../src/ledger/deadline-fates';

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
  await redis.del(keys.audit(8453), keys.ledgerCursor(8453), keys.ledger(8453));
  redis.disconnect();
});
beforeEach(() => redis.del(keys.audit(8453), keys.ledgerCursor(8453), keys.ledger(8453)));

const fateOf = (fates: DeadlineFate[], r: AuditRecord) => fates.find((f) => f.requestId === r.requestId)?.fate;

describe('DeadlineFates', () => {
  it('behavior: judged once past the deadline: executed, reverted or unused, firm or not, with the delay of the first swap', async () => {
    const swapped = firm(1);
    const reverted = firm(2);
    const unused = firm(3);
    const indicative = firm(4, { amountOut: undefined });
    const undated = firm(5, { deadline: undefined });
    const nobody = firm(6, { integratorId: '' });
    const early = firm(-100);
    const justAfter = firm(-55, { deadline: T + 65 });
    const tracker = new DeadlineFates(redis, keys.audit(8453), 3_600);
    // The ledger first committed at T − 70: a signature of T − 100 may have been used in a block
    // before its first; one of T − 55 not (a block made after the signing).
    tracker.start(0, T - 70, [], []);
    await signed(early, justAfter, swapped, reverted, unused, indicative, undated, nobody);
    tracker.add([sampleLedgerEntry(10, T + 5, { requestId: swapped.requestId })]);
    tracker.add([], [sampleLedgerRevert(11, T + 6, { requestId: reverted.requestId })]);
    tracker.add([
      sampleLedgerEntry(12, T + 9, { requestId: indicative.requestId }),
      sampleLedgerEntry(13, T + 30, { requestId: swapped.requestId }),
    ]);
    // The ledger's time at the first deadline: nothing final yet.
    expect(await tracker.judge(13, T + 61)).toEqual([]);
    const fates = await tracker.judge(14, T + 70);
    expect(fates.map((f) => [f.requestId, f.firm, f.fate, f.delaySeconds, f.blockNumber, f.blockTime])).toEqual([
      [justAfter.requestId, true, 'unused', undefined, 14, T + 70],
      [swapped.requestId, true, 'executed', 4, 14, T + 70],
      [reverted.requestId, true, 'reverted', undefined, 14, T + 70],
      [unused.requestId, true, 'unused', undefined, 14, T + 70],
      [indicative.requestId, false, 'executed', 5, 14, T + 70],
    ]);
    expect(fates.every((f) => f.replayed === undefined)).toBe(true);
    // Judged once.
    expect(await tracker.judge(15, T + 80)).toEqual([]);
  });

  it('behavior: a resumed ledger judges again what the run before judged, marked replayed', async () => {
    const before = firm(1);
    const after = firm(20);
    const tracker = new DeadlineFates(redis, keys.audit(8453), 3_600);
    // The run before committed up to a block of time T + 70: it judged `before` (deadline T + 61).
    tracker.start(0, -Infinity, [], [], T + 70);
    await signed(before, after);
    const fates = await tracker.judge(30, T + 90);
    expect(fates.map((f) => [f.requestId, f.replayed])).toEqual([
      [before.requestId, true],
      [after.requestId, undefined],
    ]);
  });

  it('behavior: a reorg forgets the calls of the orphaned blocks and judges again what was judged in them', async () => {
    const r = firm(1);
    const tracker = new DeadlineFates(redis, keys.audit(8453), 3_600);
    tracker.start(0, 0, [], []);
    await signed(r);
    tracker.add([sampleLedgerEntry(20, T + 62, { requestId: r.requestId })]);
    expect(fateOf(await tracker.judge(20, T + 62), r)).toBe('executed');
    expect(tracker.judgedAbove(19).map((f) => f.requestId)).toEqual([r.requestId]);
    tracker.rollback(19);
    expect(tracker.judgedAbove(19)).toEqual([]);
    expect(fateOf(await tracker.judge(20, T + 63), r)).toBe('unused');
  });

  it("behavior: started from the ledger in Redis: a new ledger judges only what was signed after its start; a resumed one every signature, those its cursor passed replayed, with the ledger's calls", async () => {
    const now = Math.floor(Date.now() / 1_000);
    const signedAt = (second: number, over: Partial<AuditRecord> = {}) =>
      firm(0, { time: (now + second) * 1_000, timestamp: now + second, deadline: now + second + 60, ...over });
    const before = signedAt(-30);
    const swapped = signedAt(-20);
    await signed(before, swapped);
    await redis.zadd(
      keys.ledger(8453),
      5,
      ledgerEntryJson(sampleLedgerEntry(5, now - 10, { requestId: swapped.requestId })),
    );
    // A new ledger (no cursor) started now: both may have been used before its first block.
    const fresh = new DeadlineFates(redis, keys.audit(8453), 900);
    await startFromLedger(fresh, redis, keys, 8453, 900, now * 1_000);
    expect(await fresh.judge(9, now + 100)).toEqual([]);
    // Resumed, its cursor at a block of time now + 35: `before` (deadline now + 30) was judged by the run before.
    await redis.set(keys.ledgerCursor(8453), ledgerCursorJson({ number: 8, hash: '0x08', time: now + 35 }));
    const resumed = new DeadlineFates(redis, keys.audit(8453), 900);
    await startFromLedger(resumed, redis, keys, 8453, 900, now * 1_000);
    const fates = await resumed.judge(9, now + 100);
    expect(fates.map((f) => [f.requestId, f.fate, f.replayed])).toEqual([
      [before.requestId, 'unused', true],
      [swapped.requestId, 'executed', undefined],
    ]);
  });
});
