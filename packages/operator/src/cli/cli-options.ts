/**
 * Option parsing shared by the operator's `audit`, `settle`, `markouts`, `fills` and `risk` commands:
 * core's strict command line (command-line.ts: an option given twice is refused, not its last
 * value kept), plus the few value types they take (chain lists, UTC times, months).
 */
import { CommandLineError, parseCommandLine } from '@pmm/core';
import { KNOWN_CHAIN_IDS, findChain, isAddress } from '@pmm/protocol';

/** A mistake in the command line: printed with the usage, exit code 2. */
export class UsageError extends Error {}

export interface ParsedOptions {
  /** String options by name (undefined when not given). */
  values: Record<string, string | undefined>;
  /** Boolean options that were given. */
  flags: Set<string>;
  positionals: string[];
}

/**
 * Parses `argv` strictly: an unknown option, a missing value, or an option given more than once
 * is a UsageError (none of these commands takes an option twice: a list is comma-separated).
 */
export function parseOptions(
  argv: readonly string[],
  strings: readonly string[],
  flags: readonly string[] = [],
): ParsedOptions {
  try {
    const { values, flags: given, positionals } = parseCommandLine(argv, { values: strings, flags });
    return { values, flags: given, positionals };
  } catch (err) {
    if (err instanceof CommandLineError) throw new UsageError(err.message);
    throw err;
  }
}

/** `--chain 8453,56` (default: every chain of the registry). */
export function chainList(text: string | undefined): number[] {
  if (text === undefined || text === 'all') return [...KNOWN_CHAIN_IDS];
  return text.split(',').map((s) => chainIdArg(s.trim()));
}

export function chainIdArg(text: string): number {
  const id = /^[0-9]{1,10}$/.test(text) ? Number(text) : NaN;
  if (!findChain(id)) throw new UsageError(`"${text}" is not a chain of the registry (${KNOWN_CHAIN_IDS.join(', ')})`);
  return id;
}

/** `YYYY-MM-DD` or an ISO 8601 date-time; UTC unless it names a zone. Unix milliseconds. */
export function timeArg(name: string, text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const m = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?(Z|[+-]\d{2}:\d{2})?)?$/.exec(text);
  let ms = m ? Date.parse(m[1] && !m[4] ? `${text}Z` : m[1] ? text : `${text}T00:00:00Z`) : NaN;
  // Date.parse rolls 2026-02-30 over into March: the day must exist in its month.
  const [y, mo, d] = text.slice(0, 10).split('-').map(Number) as [number, number, number];
  if (new Date(Date.UTC(y, mo - 1, d)).getUTCDate() !== d) ms = NaN;
  if (!Number.isFinite(ms)) throw new UsageError(`--${name}: "${text}" is not YYYY-MM-DD or an ISO 8601 time`);
  return ms;
}

/** `YYYY-MM` → [first instant of the month, first instant of the next), Unix milliseconds, UTC. */
export function monthArg(text: string): [number, number] {
  const m = /^(\d{4})-(0[1-9]|1[0-2])$/.exec(text);
  if (!m) throw new UsageError(`--month: "${text}" is not YYYY-MM`);
  const year = Number(m[1]);
  const month = Number(m[2]) - 1;
  return [Date.UTC(year, month, 1), Date.UTC(year, month + 1, 1)];
}

export function addressArg(name: string, text: string | undefined): string | undefined {
  if (text === undefined) return undefined;
  if (!isAddress(text)) throw new UsageError(`--${name}: "${text}" is not an address`);
  return text.toLowerCase();
}

/** The options of a report over a period (`markouts`, `fills`): --from, --to, --integrator, --chain, --format. */
export interface ReportOptions {
  fromMs: number;
  toMs: number;
  integrator?: string;
  chains: number[];
  format: 'table' | 'json' | 'csv';
}

export function reportOptions(argv: readonly string[]): ReportOptions {
  const { values, positionals } = parseOptions(argv, ['from', 'to', 'integrator', 'chain', 'format']);
  if (positionals.length > 0) throw new UsageError(`unexpected argument "${positionals[0]}"`);
  const fromMs = timeArg('from', values.from);
  const toMs = timeArg('to', values.to);
  if (fromMs === undefined || toMs === undefined) throw new UsageError('--from and --to are required');
  if (toMs <= fromMs) throw new UsageError('--to must be after --from');
  const format = values.format ?? 'table';
  if (format !== 'table' && format !== 'json' && format !== 'csv')
    throw new UsageError('--format must be table, json or csv');
  return { fromMs, toMs, integrator: values.integrator, chains: chainList(values.chain), format };
}

/** The options and the closing lines of a report's usage: what is listed, and what each format holds. */
export function reportUsage(what: { items: string; table: string; json: string; csv: string }): string {
  return `Options:
  --from, --to          YYYY-MM-DD or ISO 8601, UTC unless a zone is given; --to is exclusive
  --integrator <id>     only this integrator's ${what.items}
  --chain <id,...>      chains (default: every chain of the registry)
  --format table|json|csv
                        table (default): ${what.table}; json: ${what.json}; csv: ${what.csv}

Beside a running \`npm start\`, it needs no settings (its Redis); else REDIS_URL as the services.
Exit codes: 0 done, 1 error, 2 usage.`;
}
