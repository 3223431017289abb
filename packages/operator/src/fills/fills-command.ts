/**
 * `fills --from <time> --to <time> [--integrator ID] [--chain ID,...] --format table|json|csv`:
 * the fate of every signature given in the period (by signing time) and the figures aggregators
 * rank the maker on, from Redis only (the audit trail and the ledger): no node, no key. Its own
 * command, not a part of `markouts`: it reads the audit trail (every signature, used or not)
 * where markouts read the ledger's swaps and the mids, and it answers another question (did the
 * quotes hold and get used, not what the flow cost).
 */
import { chainFates, fillFigures, type AuditRecord, type FateLedger, type SignatureFate } from '@pmm/core';
import type { AuditReader } from '../audit-trail/audit-reader';
import { reportOptions, reportUsage } from '../cli/cli-options';
import { reportErrors } from '../cli/run-operator-command';
import { fillCsv, fillJson, fillTable } from './fill-report';

export const FILLS_USAGE = `Usage: npm run fills -- --from <time> --to <time> [options]

The fate of every signature given in the period (by signing time), once its window has passed in
the ledger's time: executed (its block, the delay from signing in seconds and, for a firm quote,
in blocks, executed against quoted), reverted (the router's error), unused; pending while the
window is open or the ledger behind it. Per integrator, chain and pair: fill rate (firm signatures
executed / firm signatures), revert rate (reverted / attempted) by reason, unused share, and the
sign-to-execution delay (median and p95).

${reportUsage({ items: 'signatures', table: 'the figures', json: 'fates and figures', csv: 'one line per signature' })}`;

export interface FillsCommandDeps {
  trail: Pick<AuditReader, 'list'>;
  ledger: FateLedger;
  out(text: string): void;
  err(line: string): void;
}

export function runFillsCommand(argv: readonly string[], deps: FillsCommandDeps): Promise<number> {
  return reportErrors('fills', FILLS_USAGE, deps, () => fills(argv, deps));
}

async function fills(argv: readonly string[], deps: FillsCommandDeps): Promise<number> {
  const { fromMs, toMs, integrator, chains, format } = reportOptions(argv);
  const fates: SignatureFate[] = [];
  for (const chainId of chains) {
    const signed: AuditRecord[] = [];
    for await (const e of deps.trail.list({ chains: [chainId], integratorId: integrator, fromMs, toMs }))
      signed.push(e.record);
    // The calls that can be theirs (a call sent after the window, QuoteExpired, is an attempt too).
    fates.push(...(await chainFates(deps.ledger, chainId, signed)).fates);
  }
  const report = {
    period: { from: new Date(fromMs).toISOString(), to: new Date(toMs).toISOString() },
    chains,
    fates,
    figures: fillFigures(fates),
  };
  deps.out(format === 'json' ? fillJson(report) : format === 'csv' ? fillCsv(report) : fillTable(report));
  return 0;
}
