/**
 * The ledger's metrics (prom-client through core's createMetrics): what executes, for whom, and
 * how far the ledger is behind. Every series carries `service="ledger"` and `chain`.
 */
import { createMetrics, type Metrics } from '@pmm/core';
import { LIMIT_NAMES } from './limit-window';

/** Lag buckets, blocks: the goal is p99 ≤ 2 blocks at 50 swaps per block. */
const LAG_BUCKETS = [0, 1, 2, 3, 5, 10, 25, 100];
/** Sign-to-execution delay buckets, seconds: a quote is valid seconds to minutes (the router takes one up to 30 s early). */
const DELAY_BUCKETS = [0, 1, 2, 3, 5, 10, 20, 30, 60, 120, 300];

type Counter = ReturnType<Metrics['counter']>;
type Gauge = ReturnType<Metrics['gauge']>;
type Histogram = ReturnType<Metrics['histogram']>;

export interface LedgerMetrics {
  metrics: Metrics;
  headBlock: Gauge;
  ledgerBlock: Gauge;
  lagBlocks: Gauge;
  lag: Histogram;
  /** labels integrator, pair */
  swaps: Counter;
  notional: Counter;
  /** label integrator */
  markout60s: Gauge;
  markout60sSwaps: Gauge;
  /** The same against each pair's reference (swaps of pairs with one). */
  referenceMarkout60s: Gauge;
  referenceMarkout60sSwaps: Gauge;
  /** labels integrator, reason: router calls that reverted (ledger-revert.ts) */
  reverts: Counter;
  /** labels integrator, fate: firm signatures judged at their deadline (deadline-fates.ts) */
  firmSignatures: Counter;
  /** label integrator: executed signatures' delay from the signed timestamp to the first swap's block */
  signToExecution: Histogram;
  reorgs: Counter;
  orphanedSwaps: Counter;
  orphanedReverts: Counter;
  blockErrors: Counter;
  nodeUp: Gauge;
  /** label reason: lagging | ahead | jump */
  headsRefused: Counter;
  /** label reason: what the transport threw away (the indexer's reasons: oversized, malformed, redirect, …) */
  messagesDropped: Counter;
  /** label limit: halts written by a limit on executed swaps */
  limitTrips: Counter;
  limitTripFailures: Counter;
  /** Entries of the halts' log that did not parse (skipped by the limits, never thrown on). */
  haltLogMalformed: Counter;
  limitsBlock: Gauge;
}

export function createLedgerMetrics(opts: { chainId: number; defaultMetrics?: boolean }): LedgerMetrics {
  const metrics: Metrics = createMetrics('ledger', opts);
  metrics.registry.setDefaultLabels({ service: 'ledger', chain: String(opts.chainId) });
  const out: LedgerMetrics = {
    metrics,
    headBlock: metrics.gauge('ledger_head_block', 'Newest admitted head (the head guard of the indexer)', []),
    ledgerBlock: metrics.gauge('ledger_block', 'Last block the ledger holds', []),
    lagBlocks: metrics.gauge(
      'ledger_lag_blocks',
      'Blocks between the admitted head and the last block the ledger holds',
      [],
    ),
    lag: metrics.histogram(
      'ledger_lag_blocks_observed',
      'Blocks the ledger was behind the admitted head at each committed block',
      [],
      LAG_BUCKETS,
    ),
    swaps: metrics.counter('ledger_swaps_total', 'Executed swaps of the router, by integrator and pair', [
      'integrator',
      'pair',
    ] as const),
    notional: metrics.counter(
      'ledger_notional_quote_total',
      "Executed notional in the chain's quote token, by integrator and pair",
      ['integrator', 'pair'] as const,
    ),
    markout60s: metrics.gauge(
      'ledger_markout_60s_bps',
      "Mean 60 s markout of the integrator's last swaps (at most 100), basis points from the maker's side (negative: the maker lost)",
      ['integrator'] as const,
    ),
    markout60sSwaps: metrics.gauge('ledger_markout_60s_swaps', 'Swaps behind ledger_markout_60s_bps (at most 100)', [
      'integrator',
    ] as const),
    referenceMarkout60s: metrics.gauge(
      'ledger_reference_markout_60s_bps',
      "Mean 60 s markout against the pair's reference of the integrator's last swaps with one (at most 100), basis points from the maker's side: a curve that stopped moving shows its losses here, not in ledger_markout_60s_bps",
      ['integrator'] as const,
    ),
    referenceMarkout60sSwaps: metrics.gauge(
      'ledger_reference_markout_60s_swaps',
      'Swaps behind ledger_reference_markout_60s_bps (at most 100)',
      ['integrator'] as const,
    ),
    reverts: metrics.counter(
      'ledger_reverted_calls_total',
      "Router swap calls that reverted, by integrator (who asked for the signature; '(unattributed)' when no audit record matches) and reason (the router's error)",
      ['integrator', 'reason'] as const,
    ),
    firmSignatures: metrics.counter(
      'ledger_firm_signatures_total',
      'Firm signatures judged at the first block past their deadline, by integrator and fate: executed (a swap was attributed to the request), reverted (no swap, a reverted call was), unused (neither); a reverted call mined later is not counted back',
      ['integrator', 'fate'] as const,
    ),
    signToExecution: metrics.histogram(
      'ledger_sign_to_execution_seconds',
      "Seconds from a signature's signed timestamp to the block time of the first swap attributed to its request, observed when the signature is judged at its deadline (firm and indicative), by integrator",
      ['integrator'] as const,
      DELAY_BUCKETS,
    ),
    reorgs: metrics.counter('ledger_reorgs_total', 'Reorgs followed (the orphaned blocks removed)', []),
    orphanedSwaps: metrics.counter('ledger_orphaned_swaps_total', 'Swaps removed with their orphaned blocks', []),
    orphanedReverts: metrics.counter(
      'ledger_orphaned_reverts_total',
      'Reverted router calls removed with their orphaned blocks',
      [],
    ),
    blockErrors: metrics.counter('ledger_block_errors_total', 'Blocks that failed and were read again', []),
    nodeUp: metrics.gauge('ledger_node_up', '1 while the node connection is up', []),
    headsRefused: metrics.counter(
      'ledger_heads_refused_total',
      'Heads not followed: older than MAX_HEAD_LAG_MS, ahead of the clock by more than MAX_HEAD_LEAD_MS, or an unconfirmed jump of more than MAX_HEAD_JUMP blocks',
      ['reason'] as const,
    ),
    messagesDropped: metrics.counter(
      'ledger_node_messages_dropped_total',
      'Messages from the node thrown away: above MAX_RPC_ANSWER_BYTES, malformed, for nothing pending, or a redirect (never followed)',
      ['reason'] as const,
    ),
    limitTrips: metrics.counter(
      'ledger_limit_trips_total',
      'Halts written by a limit on what executes (LIMIT_* settings), by limit: integrator-notional, pair-notional, integrator-markout, integrator-reference-markout, integrator-below-quote, integrator-reverts, integrator-unused',
      ['limit'] as const,
    ),
    limitsBlock: metrics.gauge(
      'ledger_limits_block',
      'Last block the limits on executed swaps were evaluated at (0 while no limit is set; behind ledger_block: they cannot read Redis)',
      [],
    ),
    limitTripFailures: metrics.counter(
      'ledger_limit_trip_failures_total',
      'Limits broken whose halt could not be written or confirmed durable (tried again at the next block)',
      [],
    ),
    haltLogMalformed: metrics.counter(
      'ledger_halt_log_malformed_total',
      "Entries of the halts' log that did not parse, skipped by the limits (only the risk command writes the log)",
      [],
    ),
  };
  // Counted failures and trips exist from the start at 0 (an alert's increase() sees the first one).
  out.blockErrors.inc(0);
  out.reorgs.inc(0);
  for (const limit of LIMIT_NAMES) out.limitTrips.inc({ limit }, 0);
  out.limitTripFailures.inc(0);
  out.haltLogMalformed.inc(0);
  return out;
}
