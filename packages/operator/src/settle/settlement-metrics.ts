/**
 * `settle --metrics`: a settlement report's alerting figures (settlement-report.ts computes the
 * report) in the Prometheus text format, for node_exporter's textfile collector (or a
 * Pushgateway): `settle` is a batch job, so these are as fresh as its last run. Counts are over
 * the report's period. Written by prom-client, as the services' metrics are (its escaping and
 * format), on a registry of its own with no default metrics or labels: the file holds the figures
 * of this run only.
 */
import { Gauge, Registry } from 'prom-client';
import type { SettlementReport } from './settlement-report';

/** The text of the metrics file for `report`. */
export async function settlementMetrics(report: SettlementReport): Promise<string> {
  const registry = new Registry();
  const metric = <L extends string>(
    name: string,
    help: string,
    labelNames: readonly L[],
    rows: [Partial<Record<L, string | number>>, number][],
  ) => {
    const gauge = new Gauge({ name, help, labelNames, registers: [registry] });
    for (const [labels, value] of rows) gauge.set(labels, value);
  };
  const chains = report.chains.map((c) => c.chainId);
  const swapsBy = new Map<string, [{ chain: number; integrator: string }, number]>();
  for (const l of [...report.swaps, ...report.unattributed]) {
    const key = `${l.chainId}\u0000${l.integratorId}`;
    const row = swapsBy.get(key) ?? [{ chain: l.chainId, integrator: l.integratorId }, 0];
    row[1] += 1;
    swapsBy.set(key, row);
  }
  metric(
    'pmm_settlement_period_end_timestamp_seconds',
    'End (exclusive) of the period of the last settle run that wrote this file.',
    [],
    [[{}, Date.parse(report.period.to) / 1000]],
  );
  metric(
    'pmm_settlement_swaps',
    'Swaps found in the period, by integrator ("" = listed apart: no matching audit record).',
    ['chain', 'integrator'],
    [...swapsBy.values()],
  );
  metric(
    'pmm_settlement_unexamined_transactions',
    'Transactions that touched the router like a swap but could not be examined (no tracer on the node, or its traces failed through every retry).',
    ['chain'],
    chains.map((c) => [{ chain: c }, report.unexamined.filter((u) => u.chainId === c).length]),
  );
  metric(
    'pmm_settlement_period_ended',
    "1 when the chain's node had a block at or after the period's end; 0: blocks of the period may be missing.",
    ['chain'],
    report.chains.map((c) => [{ chain: c.chainId }, c.periodEnded ? 1 : 0]),
  );
  metric(
    'pmm_settlement_signature_excess_swaps',
    'Swaps beyond the number of requests on their signature (one signature replayed), by integrator.',
    ['chain', 'integrator'],
    report.signals.map((s) => [{ chain: s.chainId, integrator: s.integratorId }, s.excessSwaps]),
  );
  metric(
    'pmm_settlement_late_swaps',
    'Swaps executed more than lateAfterSeconds after signing, by integrator.',
    ['chain', 'integrator'],
    report.signals.map((s) => [{ chain: s.chainId, integrator: s.integratorId }, s.lateSwaps.length]),
  );
  metric(
    'pmm_settlement_max_delay_seconds',
    'Longest time from signing to execution of a swap in the period, by integrator.',
    ['chain', 'integrator'],
    report.signals.map((s) => [{ chain: s.chainId, integrator: s.integratorId }, s.maxDelaySeconds]),
  );
  return registry.metrics();
}
