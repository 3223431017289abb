/**
 * Swaps waiting for a markout horizon (pending-markouts.ts), against an in-memory mid history:
 * a swap gets its markout once the history reaches its horizon, from the book of the last block
 * at or before it; a reorg's orphans and swaps that waited too long get none.
 */
import type { LedgerEntry, MidRecord } from '@pmm/core';
import { recordAt } from '@pmm/settlement';
import { PendingMarkouts, type MidHistory } from '../src/ledger/pending-markouts';

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
  const pending = new PendingMarkouts('5b', history(records), (e, bps) => got.push([e.txHash, bps]), 3_600);
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
