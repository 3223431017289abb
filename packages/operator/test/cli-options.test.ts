import { UsageError, chainList, monthArg, parseOptions, timeArg } from '../src/cli/cli-options';

describe('operator command options', () => {
  it('behavior: --month covers the calendar month in UTC (December rolls over)', () => {
    expect(monthArg('2026-10').map((t) => new Date(t).toISOString())).toEqual([
      '2026-10-01T00:00:00.000Z',
      '2026-11-01T00:00:00.000Z',
    ]);
    expect(monthArg('2026-12')[1]).toBe(Date.UTC(2027, 0, 1));
    expect(() => monthArg('2026-13')).toThrow(UsageError);
    expect(() => monthArg('2026-1')).toThrow('--month: "2026-1" is not YYYY-MM');
  });

  it('behavior: times are a date or ISO 8601, UTC unless a zone is given', () => {
    expect(timeArg('from', '2026-10-05')).toBe(Date.UTC(2026, 9, 5));
    expect(timeArg('from', '2026-10-05T12:30')).toBe(Date.UTC(2026, 9, 5, 12, 30));
    expect(timeArg('from', '2026-10-05T12:30:00+02:00')).toBe(Date.UTC(2026, 9, 5, 10, 30));
    expect(timeArg('from', undefined)).toBeUndefined();
    expect(() => timeArg('to', 'yesterday')).toThrow('--to: "yesterday" is not YYYY-MM-DD or an ISO 8601 time');
    expect(() => timeArg('to', '2026-02-30')).toThrow(UsageError);
  });

  it('behavior: chains come from the registry; unknown options and chains are usage errors', () => {
    expect(chainList(undefined)).toEqual([8453, 56, 4663]);
    expect(chainList('56,8453')).toEqual([56, 8453]);
    expect(() => chainList('1')).toThrow('"1" is not a chain of the registry (8453, 56, 4663)');
    expect(parseOptions(['--chain', '56', 'x', '--json'], ['chain'], ['json'])).toEqual({
      values: { chain: '56' },
      flags: new Set(['json']),
      positionals: ['x'],
    });
    expect(() => parseOptions(['--nope'], ['chain'])).toThrow(UsageError);
    expect(() => parseOptions(['--chain'], ['chain'])).toThrow(UsageError);
  });
});
