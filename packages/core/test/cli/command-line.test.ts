/**
 * The operator commands' command line (command-line.ts): strict, and an option given twice is
 * refused instead of keeping its last value; only a declared list repeats.
 */
import { CommandLineError, parseCommandLine } from '../../src/cli/command-line';

const spec = { values: ['chain', 'reason'], lists: ['origin-rate'], flags: ['all', 'json'] };

it('behavior: values, lists, flags and positionals as given (a list in order, --name=value too)', () => {
  expect(
    parseCommandLine(
      ['halt', '--chain=8453', '--origin-rate', '8453=1', '--json', '--origin-rate', '56=2', '--reason', 'r'],
      spec,
    ),
  ).toEqual({
    values: { chain: '8453', reason: 'r' },
    lists: { 'origin-rate': ['8453=1', '56=2'] },
    flags: new Set(['json']),
    positionals: ['halt'],
  });
  expect(parseCommandLine([], spec)).toEqual({ values: {}, lists: {}, flags: new Set(), positionals: [] });
});

it('security: an option given twice is refused, whatever its form, not its last value kept', () => {
  const cases: [string[], string][] = [
    [['--chain', '8453', '--chain', '56'], '--chain'],
    [['--chain=8453', '--chain', '56'], '--chain'],
    [['--chain', '8453', '--chain', '8453'], '--chain'],
    [['--all', '--all'], '--all'],
    [['--json', 'x', '--reason', 'a', '--json'], '--json'],
  ];
  for (const [argv, name] of cases) {
    expect(() => parseCommandLine(argv, spec)).toThrow(CommandLineError);
    expect(() => parseCommandLine(argv, spec)).toThrow(`${name} given more than once`);
  }
});

it('error: an unknown option or a missing value is a CommandLineError', () => {
  expect(() => parseCommandLine(['--nope'], spec)).toThrow(CommandLineError);
  expect(() => parseCommandLine(['--chain'], spec)).toThrow(CommandLineError);
  expect(() => parseCommandLine(['--json=yes'], spec)).toThrow(CommandLineError);
});
