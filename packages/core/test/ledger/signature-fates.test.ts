/**
 * Each signature's fate and the figures per integrator, chain and pair (pure): executed before
 * reverted before unused, pending until the ledger's time passes the deadline (never unused
 * early), the first swap's delay and executed-vs-quoted, the last revert's reason; calls joined
 * to the request they were attributed to, not to every record of a shared signature, and only
 * within the signature's window (ten minutes past its deadline at most); rates that
 * add up, none over nothing.
 */
import {
  FATE_CALLS,
  fateCallPeriod,
  fillFigures,
  signatureFates,
  spreadOf,
  type AuditRecord,
  type LedgerEntry,
  type LedgerRevert,
} from '@pmm/core';
import { sampleAuditRecord, sampleLedgerRevert } from '@pmm/testkit';

const SIGNED_AT = 1_800_000_000_000;
const WETH = '0x4200000000000000000000000000000000000006';
const USDC = '0x833589fcd6edb6e08f4c7c32d4f71b54bda02913';

const record = (n: number, over: Partial<AuditRecord> = {}): AuditRecord =>
  sampleAuditRecord(n, {
    time: SIGNED_AT + n * 1_000,
    timestamp: SIGNED_AT / 1000 + n,
    deadline: SIGNED_AT / 1000 + n + 60,
    integratorId: 'acme',
    tokenIn: USDC,
    tokenOut: WETH,
    amountOut: '1000',
    blockNumber: 100,
    ...over,
  });

const swap = (r: AuditRecord, block: number, over: Partial<LedgerEntry> = {}): LedgerEntry => ({
  chainId: r.chainId,
  blockNumber: block,
  blockHash: '0x' + '11'.repeat(32),
  blockTime: SIGNED_AT / 1000 + (block - 100) * 2,
  txHash: `0x${block.toString(16).padStart(64, '0')}`,
  callIndex: 0,
  via: 'direct',
  integratorId: r.integratorId,
  keyId: r.keyId,
  requestId: r.requestId,
  base: WETH,
  quote: USDC,
  pair: 'WETH/USDC',
  side: 'ask',
  baseAmount: '0.001',
  quoteAmount: '3',
  executionPrice: '3000',
  amountOut: '990',
  quotedAmountOut: '1000',
  ...over,
});

const reverted = (r: AuditRecord, block: number, reason: string): LedgerRevert =>
  sampleLedgerRevert(block, SIGNED_AT / 1000 + (block - 100) * 2, {
    chainId: r.chainId,
    reason,
    requestId: r.requestId,
    integratorId: r.integratorId,
    txHash: `0x${block.toString(16).padStart(64, 'e')}`,
  });

describe('signatureFates', () => {
  const executed = record(1);
  const revertedTwice = record(2);
  const unused = record(3);
  const open = record(4, { deadline: SIGNED_AT / 1000 + 10_000 });
  const undated = record(5, { deadline: undefined });
  const revertedThenExecuted = record(6, { amountOut: undefined, blockNumber: undefined });
  // The same user, pair and second as `executed`: the same signature, another request, never sent.
  const sameSignature = record(7, { signature: executed.signature });
  const inputs = {
    records: [executed, revertedTwice, unused, open, undated, revertedThenExecuted, sameSignature],
    entries: [
      swap(executed, 103),
      swap(executed, 110),
      swap(revertedThenExecuted, 108, { quotedAmountOut: undefined }),
      // Not attributed: joined to no request.
      swap(unused, 109, { requestId: '', integratorId: '' }),
    ],
    reverts: [
      reverted(revertedTwice, 104, 'InsufficientOutput'),
      reverted(revertedTwice, 106, 'QuoteExpired'),
      reverted(revertedThenExecuted, 105, 'InsufficientReserve'),
    ],
    ledgerTime: () => SIGNED_AT / 1000 + 1_000,
  };
  const fates = signatureFates(inputs);
  const fateOf = (r: AuditRecord) => fates.find((f) => f.requestId === r.requestId)!;

  it('behavior: executed with its first swap, the delay from signing and the quote gap', () => {
    expect(fateOf(executed)).toMatchObject({
      fate: 'executed',
      executions: 2,
      blockNumber: 103,
      delaySeconds: 5,
      delayBlocks: 3,
      amountOut: '990',
      quotedAmountOut: '1000',
      executedVsQuotedBps: -100,
      firm: true,
      pair: 'WETH/USDC',
    });
  });

  it('behavior: reverted names the last revert; a swap after a revert makes it executed', () => {
    expect(fateOf(revertedTwice)).toMatchObject({
      fate: 'reverted',
      reason: 'QuoteExpired',
      reverts: 2,
      blockNumber: 106,
    });
    expect(fateOf(revertedThenExecuted)).toMatchObject({ fate: 'executed', reverts: 1, firm: false });
    expect(fateOf(revertedThenExecuted).delayBlocks).toBeUndefined();
    expect(fateOf(sameSignature)).toMatchObject({ fate: 'unused', executions: 0, signature: executed.signature });
  });

  it('behavior: unused once the ledger is past the deadline; pending while it is not, or without a deadline', () => {
    expect(fateOf(unused)).toMatchObject({ fate: 'unused', executions: 0, reverts: 0, pair: 'WETH/USDC' });
    expect(fateOf(open).fate).toBe('pending');
    expect(fateOf(undated).fate).toBe('pending');
    // The ledger not yet past a deadline: even a swap does not make a fate final.
    const behind = signatureFates({ ...inputs, ledgerTime: () => executed.deadline! });
    expect(behind.every((f) => f.fate === 'pending')).toBe(true);
    expect(signatureFates({ ...inputs, ledgerTime: () => undefined }).every((f) => f.fate === 'pending')).toBe(true);
  });

  it("behavior: a call is the signature's only within its window: ten minutes after the deadline, a minute before signing", () => {
    const r = record(9);
    const at = (blockTime: number) => ({ ...reverted(r, 200, 'QuoteExpired'), blockTime });
    const fateWith = (blockTime: number) => signatureFates({ ...inputs, records: [r], reverts: [at(blockTime)] })[0]!;
    expect(fateWith(r.deadline! + FATE_CALLS.afterDeadlineSeconds)).toMatchObject({ fate: 'reverted', reverts: 1 });
    expect(fateWith(r.deadline! + FATE_CALLS.afterDeadlineSeconds + 1)).toMatchObject({ fate: 'unused', reverts: 0 });
    expect(fateWith(r.timestamp - FATE_CALLS.beforeSeconds)).toMatchObject({ fate: 'reverted' });
    expect(fateWith(r.timestamp - FATE_CALLS.beforeSeconds - 1)).toMatchObject({ fate: 'unused' });
    // What a reader fetches for a set of records: every call any of them can have, no more.
    expect(fateCallPeriod([record(1), r])).toEqual({
      from: record(1).timestamp - FATE_CALLS.beforeSeconds,
      to: r.deadline! + FATE_CALLS.afterDeadlineSeconds + 1,
    });
    expect(fateCallPeriod([])).toBeUndefined();
  });

  it('behavior: the figures per integrator, chain and pair add up', () => {
    const other = record(8, { integratorId: 'beta' });
    const [acme, beta] = fillFigures([...fates, ...signatureFates({ ...inputs, records: [other] })]);
    expect(acme).toMatchObject({
      integratorId: 'acme',
      chainId: 8453,
      pair: 'WETH/USDC',
      signatures: 5,
      executed: 2,
      reverted: 1,
      unused: 2,
      pending: 2,
      firm: 4,
      firmExecuted: 1,
      fillRate: 0.25,
      attempted: 3,
      revertRate: 1 / 3,
      revertsByReason: { QuoteExpired: 1 },
      unusedShare: 0.4,
    });
    expect(acme!.executed + acme!.reverted + acme!.unused).toBe(acme!.signatures);
    expect(acme!.delayBlocks).toEqual({ median: 3, p95: 3 });
    expect(acme!.delaySeconds).toEqual({ median: 7.5, p95: 10 });
    expect(beta).toMatchObject({ integratorId: 'beta', signatures: 1, unused: 1, fillRate: 0, revertRate: null });
    expect(beta!.delaySeconds).toBeNull();
  });

  it('behavior: median and nearest-rank p95', () => {
    expect(spreadOf([])).toBeNull();
    expect(spreadOf([4])).toEqual({ median: 4, p95: 4 });
    expect(spreadOf([3, 1, 2, 4])).toEqual({ median: 2.5, p95: 4 });
    const hundred = Array.from({ length: 100 }, (_, i) => i + 1);
    expect(spreadOf(hundred)).toEqual({ median: 50.5, p95: 95 });
  });
});
