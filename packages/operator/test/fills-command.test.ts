/**
 * `fills` (pure: the readers are the test's): the strict command line (usage errors exit 2 with
 * the usage), the period by signing time, --integrator passed to the trail, the ledger read over the
 * calls that can be the signatures' (core's fateCallPeriod: from a minute before the first signed
 * timestamp to ten minutes after the last deadline, so an attempt after the window counts), and
 * the table, JSON and CSV of the same report.
 */
import type { AuditRecord } from '@pmm/core';
import { sampleAuditRecord, sampleLedgerEntry, sampleLedgerRevert } from '@pmm/testkit';
import { runFillsCommand, type FillReport } from '../src';

const T = Date.UTC(2026, 10, 5, 12) / 1000;
const record = (n: number, integratorId: string): AuditRecord =>
  sampleAuditRecord(n, {
    time: (T + n) * 1000,
    timestamp: T + n,
    deadline: T + n + 60,
    integratorId,
    amountOut: '1000',
    blockNumber: 10,
  });
const records = [record(1, 'acme'), record(2, 'acme'), record(3, 'beta'), { ...record(4, 'acme'), chainId: 56 }];
const executed = sampleLedgerEntry(12, T + 4, {
  requestId: records[0]!.requestId,
  amountOut: '1000',
  quotedAmountOut: '1000',
});

function run(argv: string[]) {
  let out = '';
  let err = '';
  const asked: { integratorId?: string; ledger: [number, number][] } = { ledger: [] };
  const code = runFillsCommand(argv, {
    trail: {
      async *list(filter) {
        asked.integratorId = filter.integratorId;
        for (const r of records)
          if (filter.chains.includes(r.chainId) && (!filter.integratorId || r.integratorId === filter.integratorId))
            if (r.time >= filter.fromMs! && r.time < filter.toMs!) yield { id: '1-0', record: r };
      },
    },
    ledger: {
      entries: async (_chain, from, to) => {
        asked.ledger.push([from, to]);
        return [executed];
      },
      reverts: async () => [sampleLedgerRevert(13, T + 6, { requestId: records[1]!.requestId, reason: 'WrongSender' })],
      cursor: async (chainId) => (chainId === 8453 ? { number: 100, hash: '0x', time: T + 1_000 } : undefined),
    },
    out: (t) => (out += t),
    err: (l) => (err += `${l}\n`),
  });
  return code.then((c) => ({ code: c, out, err, asked }));
}

const PERIOD = ['--from', '2026-11-05', '--to', '2026-11-06'];

describe('fills', () => {
  it('behavior: JSON: each fate, and the figures; the ledger read over the calls that can be theirs', async () => {
    const { code, out, asked } = await run([...PERIOD, '--chain', '8453', '--format', 'json']);
    expect(code).toBe(0);
    const report = JSON.parse(out) as FillReport;
    expect(report.fates.map((f) => [f.integratorId, f.fate, f.reason])).toEqual([
      ['acme', 'executed', undefined],
      ['acme', 'reverted', 'WrongSender'],
      ['beta', 'unused', undefined],
    ]);
    expect(report.figures.map((f) => [f.integratorId, f.signatures, f.fillRate, f.revertRate, f.unusedShare])).toEqual([
      ['acme', 2, 0.5, 0.5, 0],
      ['beta', 1, 0, null, 1],
    ]);
    // Signed timestamps T+1 … T+3, deadlines 60 s later: from T+1 − 60 to T+3 + 60 + 600, inclusive.
    expect(asked.ledger).toEqual([[T + 1 - 60, T + 3 + 60 + 600 + 1]]);
  });

  it('behavior: --integrator reads that integrator only; the table says so; CSV has a line per signature', async () => {
    const table = await run([...PERIOD, '--integrator', 'beta', '--chain', '8453']);
    expect(table.asked.integratorId).toBe('beta');
    expect(table.out).toMatch(/^fills .*: 1 signatures\n/);
    expect(table.out).toMatch(/beta\s+8453\s+WETH\/USDC\s+1\s+0\s+0\s+1\s+0\s+0\.0 % \(0\/1\)/);
    expect(table.out).not.toMatch(/acme/);
    const csv = await run([...PERIOD, '--chain', '8453', '--format', 'csv']);
    const lines = csv.out.trim().split('\n');
    expect(lines).toHaveLength(4);
    expect(lines[0]).toMatch(/^chainId,integratorId,/);
    expect(lines[2]).toMatch(/,reverted,WrongSender,/);
  });

  it('behavior: a chain whose ledger has no time yet: every fate pending, none unused', async () => {
    const { out } = await run([...PERIOD, '--chain', '56', '--format', 'json']);
    const report = JSON.parse(out) as FillReport;
    expect(report.fates.map((f) => f.fate)).toEqual(['pending']);
    expect(report.figures.map((f) => [f.signatures, f.unused, f.pending, f.unusedShare])).toEqual([[0, 0, 1, null]]);
  });

  it.each([
    [[], '--from and --to are required'],
    [['--from', '2026-11-06', '--to', '2026-11-05'], '--to must be after --from'],
    [[...PERIOD, '--format', 'xml'], '--format must be table, json or csv'],
    [[...PERIOD, '--chain', '1'], 'not a chain of the registry'],
    [[...PERIOD, '--from', '2026-11-01'], 'more than once'],
    [[...PERIOD, 'extra'], 'unexpected argument'],
  ])('error: %j is a usage error (exit 2, the message and the usage)', async (argv, message) => {
    const { code, err } = await run(argv as string[]);
    expect(code).toBe(2);
    expect(err).toContain(message);
    expect(err).toContain('Usage: npm run fills');
  });
});
