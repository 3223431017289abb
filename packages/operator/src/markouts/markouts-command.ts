/**
 * `markouts --from YYYY-MM-DD --to YYYY-MM-DD [--integrator ID] [--chain ID] --format table|json|csv`:
 * the maker's ledger of a period with each swap's markouts and the aggregates (markout-report.ts),
 * from Redis only (the ledger and the mid history): no node, no key.
 */
import type { LedgerEntry, MidRecord } from '@pmm/core';
import { buildMarkoutReport, markoutCsv, markoutJson, markoutTable } from './markout-report';
import type { LedgerReader } from '../ledger/ledger-reader';
import { reportOptions, reportUsage } from '../cli/cli-options';
import { reportErrors } from '../cli/run-operator-command';

export const MARKOUTS_USAGE = `Usage: npm run markouts -- --from <time> --to <time> [options]

The executed swaps of the maker's ledger in the period, each with its markouts at +1, +5 and +25
blocks and 12, 60 and 300 s: side x (mid at t+h - execution price) / execution price, in bps and
in quote-token units, from the maker's side (negative: the maker lost); null until the horizon
has passed. Beside each, the same against the pair's reference at t+h (its feed's answer, which a
curve that stopped moving does not follow; "ref" in the table and the CSV): null for a pair
without one. A swap with a zero leg (a dust amount the router paid nothing for) has no price,
hence no markout: "no markout: zero leg" in place of each, and it counts in no mean. Aggregated
per integrator, per pair and per size bucket: count, notional, mean, median and a 95 %
confidence interval, and the executed-versus-quoted gap where swaps had one.

${reportUsage({ items: 'swaps', table: 'the aggregates', json: 'swaps and aggregates', csv: 'one line per swap' })}`;

export interface MarkoutsCommandDeps {
  ledger: Pick<LedgerReader, 'entries' | 'mids'>;
  out(text: string): void;
  err(line: string): void;
}

export function runMarkoutsCommand(argv: readonly string[], deps: MarkoutsCommandDeps): Promise<number> {
  return reportErrors('markouts', MARKOUTS_USAGE, deps, () => markouts(argv, deps));
}

async function markouts(argv: readonly string[], deps: MarkoutsCommandDeps): Promise<number> {
  const { fromMs, toMs, integrator, chains, format } = reportOptions(argv);
  const fromSeconds = Math.ceil(fromMs / 1000);
  const toSeconds = Math.ceil(toMs / 1000);
  const entries: LedgerEntry[] = [];
  const histories = new Map<number, MidRecord[]>();
  for (const chainId of chains) {
    const found = (await deps.ledger.entries(chainId, fromSeconds, toSeconds)).filter(
      (e) => integrator === undefined || e.integratorId === integrator,
    );
    entries.push(...found);
    if (found.length === 0) continue;
    const first = found[0]!.blockNumber;
    // From the first swap's block to the history's end: the 300 s horizon may be hundreds of
    // blocks past the last swap on a fast chain (the history holds MIDS_RETENTION_SECONDS at most).
    histories.set(chainId, await deps.ledger.mids(chainId, first, Number.MAX_SAFE_INTEGER));
  }
  const report = buildMarkoutReport({
    fromSeconds,
    toSeconds,
    chains,
    entries,
    history: (id) => histories.get(id) ?? [],
  });
  deps.out(format === 'json' ? markoutJson(report) : format === 'csv' ? markoutCsv(report) : markoutTable(report));
  return 0;
}
