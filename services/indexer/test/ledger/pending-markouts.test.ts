/**
 * Swaps waiting for a markout horizon (pending-markouts.ts), against an in-memory mid history:
 * a swap gets its markout once the history reaches its horizon, from the book of the last block
 * at or before it; a reorg's orphans and swaps that waited too long get none; a swap with a zero
 * leg gets none and is reported, and never costs another swap its markout. Each markout is taken
 * against the book's mid and, from the same record, against the pair's reference.
 */
import type { LedgerEntry, MidRecord } from '@pmm/core';
import { recordAt } from '@pmm/operator';
import { LimitWindow } from '../../src/ledger/limit-window';
import { PendingMarkouts, type MidHistory } from '../../src/ledger/pending-markouts';

const WETH = '0x' + '42'.repeat(20);

function history(records: MidRecord[]): MidHistory {
  return {
    latest: async () => {
      const last = records[records.length - 1];
      return last && { block: last.block, time: last.time };
    },
    atOrBefore: async (target) => recordAt(records, target),
  };
}

const book = (block: number, mid: number): MidRecord => ({
  block,
  time: 1_000 + 2 * block,
  hash: '0x',
  pairs: { [WETH]: { bid: String(mid - 1), ask: String(mid + 1) } },
});

const swap = (blockNumber: number, txHash = `0x${blockNumber}`): LedgerEntry => ({
  chainId: 8453,
  blockNumber,
  blockHash: '0x',
  blockTime: 1_000 + 2 * blockNumber,
  txHash,
  callIndex: 0,
  via: 'direct',
  integratorId: 'acme',
  keyId: 'k',
  requestId: 'r',
  base: WETH,
  quote: '0x' + '11'.repeat(20),
  pair: 'WETH/USDC',
  side: 'bid',
  baseAmount: '1',
  quoteAmount: '3000',
  executionPrice: '3000',
  amountOut: '3000000000',
});

it('behavior: a swap waits until the history reaches its horizon, then reads the book of the last block at or before it', async () => {
  const records = [book(10, 3000), book(12, 3030)];
  const got: [string, number][] = [];
  const pending = new PendingMarkouts('5b', history(records), (e, m) => got.push([e.txHash, m.bps!]), 3_600);
  pending.add(swap(10));
  await pending.settle();
  expect(got).toEqual([]);
  // The indexer skipped blocks 13 and 14: block 15's horizon reads block 12's book once 15 is reached.
  records.push(book(16, 3060));
  await pending.settle();
  // The maker bought at 3000; the mid at the horizon is 3030 (block 12's book): +100 bps.
  expect(got).toEqual([['0x10', 100]]);
  expect(pending.size).toBe(0);
});

it("behavior: the record's reference gives the markout against it beside the mid's; a record without one gives the mid's alone", async () => {
  // The curve frozen at 3000 while the reference rose to 3030: the maker that sold lost 100 bps against it.
  const withRef = (block: number, ref?: string): MidRecord => ({
    ...book(block, 3000),
    pairs: { [WETH]: { bid: '2999', ask: '3001', ...(ref ? { ref } : {}) } },
  });
  const records = [withRef(10, '3000'), withRef(11, '3030')];
  const got: [string, { bps?: number; referenceBps?: number }][] = [];
  const pending = new PendingMarkouts('1b', history(records), (e, m) => got.push([e.txHash, m]), 3_600);
  const sold = { ...swap(10), side: 'ask' as const };
  pending.add(sold);
  pending.add(swap(11, '0x11'));
  records.push(withRef(12));
  await pending.settle();
  expect(got[0]![0]).toBe('0x10');
  expect(Math.abs(got[0]![1].bps!)).toBe(0);
  expect(got[0]![1].referenceBps).toBeCloseTo(-100, 9);
  expect(got[1]).toEqual(['0x11', { bps: 0, referenceBps: undefined }]);
});

it("behavior: a reorg's orphans get no markout; a swap that waited longer than its limit is dropped", async () => {
  const got: string[] = [];
  const pending = new PendingMarkouts('1b', history([book(1, 3000)]), (e) => got.push(e.txHash), 60);
  pending.add(swap(5));
  pending.add(swap(6));
  pending.rollback(5);
  expect(pending.size).toBe(1);
  // 100 s after block 5's swap (time 1010): it waited more than 60 s.
  pending.add(swap(55));
  expect(pending.size).toBe(1);
  await pending.settle();
  expect(got).toEqual([]);
});

/** A dust swap: 1 wei of WETH in, nothing paid out (the router rounds to 0), so no price. */
const dust = (blockNumber: number): LedgerEntry => ({
  ...swap(blockNumber, `0x${blockNumber}dust`),
  baseAmount: '0.000000000000000001',
  quoteAmount: '0',
  executionPrice: '0',
  amountOut: '0',
});
/** Ten real swaps in the dust swap's block: the maker bought at 3000. */
const tenReal = (block: number) => Array.from({ length: 10 }, (_, i) => swap(block, `0x${block}r${i}`));

it('behavior: a dust swap (a zero leg) in a batch of real ones: it is reported without a markout, every real swap gets its own, nothing is left behind', async () => {
  const records = [book(10, 3000)];
  const got: [string, number][] = [];
  const none: [string, string][] = [];
  const pending = new PendingMarkouts(
    '1b',
    history(records),
    (e, m) => got.push([e.txHash, m.bps!]),
    3_600,
    (e, reason) => none.push([e.txHash, reason]),
  );
  const real = tenReal(10);
  for (const e of [dust(10), ...real]) pending.add(e);
  expect(none).toEqual([['0x10dust', 'zero leg']]);
  records.push(book(11, 2970));
  await pending.settle();
  // The maker bought at 3000, the mid fell to 2970: −100 bps for each real swap.
  expect(got).toEqual(real.map((e) => [e.txHash, -100]));
  expect(pending.size).toBe(0);
});

it('behavior: with the markout limit behind it, the dust swap ahead of ten real swaps neither throws nor hides them: the limit trips over the ten', async () => {
  const records = [book(20, 3000)];
  const window = new LimitWindow(
    { windowSeconds: 3_600, markout: { floorBps: -20, horizon: '1b', minSwaps: 10 } },
    8453,
  );
  const pending = new PendingMarkouts('1b', history(records), (e, bps) => window.addMarkout(e, bps), 3_600);
  const all = [dust(20), ...tenReal(20)];
  window.add(all);
  for (const e of all) pending.add(e);
  records.push(book(21, 2970));
  await pending.settle();
  expect(pending.size).toBe(0);
  expect(window.breaches(1_042, () => -Infinity)).toEqual([
    expect.objectContaining({
      limit: 'integrator-markout',
      scope: { integratorId: 'acme' },
      value: '-100.00',
      reason: expect.stringContaining('over 10 swaps'),
    }),
  ]);
});

it('behavior: a consumer that throws for one swap costs no other swap its markout; the run rejects once all are handled', async () => {
  const records = [book(30, 3000), book(31, 3030)];
  const got: string[] = [];
  const pending = new PendingMarkouts(
    '1b',
    history(records),
    (e) => {
      if (e.txHash === '0x30r0') throw new Error('consumer failed');
      got.push(e.txHash);
    },
    3_600,
  );
  const real = tenReal(30);
  for (const e of real) pending.add(e);
  await expect(pending.settle()).rejects.toThrow('consumer failed');
  expect(got).toEqual(real.slice(1).map((e) => e.txHash));
  expect(pending.size).toBe(0);
});

it('behavior: a book that cannot be read leaves its swaps and those not read yet waiting; the swaps read before it get theirs', async () => {
  const records = [book(40, 3000), book(41, 3030), book(42, 3060)];
  let fail = true;
  const reader = history(records);
  const got: string[] = [];
  const pending = new PendingMarkouts(
    '1b',
    {
      latest: reader.latest,
      atOrBefore: (target) =>
        fail && 'block' in target && target.block === 42
          ? Promise.reject(new Error('redis down'))
          : reader.atOrBefore(target),
    },
    (e) => got.push(e.txHash),
    3_600,
  );
  for (const block of [40, 41, 41]) pending.add(swap(block, `0x${block}-${pending.size}`));
  await expect(pending.settle()).rejects.toThrow('redis down');
  expect([got, pending.size]).toEqual([['0x40-0'], 2]);
  fail = false;
  await pending.settle();
  expect([got, pending.size]).toEqual([['0x40-0', '0x41-1', '0x41-2'], 0]);
});
