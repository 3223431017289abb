/**
 * The indexer's metrics, declared up front (names, help, labels) on a per-instance registry.
 * Every series carries `chain` (and `service`) as a default label, so that one dashboard or
 * alert rule covers every chain's indexers and tells them apart.
 */
import { createMetrics, type Metrics, type DroppedReason } from '@pmm/core';

/** Block-to-book latency buckets, seconds: the goal is p99 < 100 ms on the devnet. */
const BLOCK_LATENCY_BUCKETS = [0.005, 0.01, 0.02, 0.03, 0.05, 0.075, 0.1, 0.15, 0.25, 0.5, 1, 2.5, 5, 10];
const CALLS_BUCKETS = [1, 2, 5, 10, 25, 50, 100, 250, 500, 1000, 2500];

/** `stale`: the block is older than MAX_HEAD_LAG_MS by the time its book would be written. */
export type BlockOutcome = 'written' | 'not_newer' | 'superseded' | 'already_stored' | 'stale' | 'failed';

/** Why a head from the node was not announced as a block to compute (see domain/head-guard.ts). */
export type HeadRefusal = 'lagging' | 'ahead' | 'jump';

type Counter = ReturnType<Metrics['counter']>;
type Gauge = ReturnType<Metrics['gauge']>;
type Histogram = ReturnType<Metrics['histogram']>;

export interface IndexerMetrics {
  metrics: Metrics;
  registry: Metrics['registry'];
  headBlock: Gauge;
  bookBlock: Gauge;
  blockToBook: Histogram;
  computeSeconds: Histogram;
  ethCallsPerBlock: Histogram;
  /** label purpose: block | registry */
  ethCalls: Counter;
  quoteCallsPerBlock: Gauge;
  /** label outcome: see BlockOutcome */
  blocks: Counter;
  /** label purpose: block | registry */
  rpcErrors: Counter;
  reconnects: Counter;
  nodeUp: Gauge;
  pairs: Gauge;
  /** label result: ok | error */
  registryRefreshes: Counter;
  booksDeleted: Counter;
  silentCallFailures: Counter;
  headLag: Gauge;
  /** MAX_HEAD_LAG_MS in seconds: the alert compares the lag with this replica's own limit. */
  maxHeadLag: Gauge;
  headLead: Gauge;
  /** MAX_HEAD_LEAD_MS in seconds, for the same comparison. */
  maxHeadLead: Gauge;
  /** label reason: see HeadRefusal */
  headsRefused: Counter;
  /** label reason: see DroppedReason (@pmm/core's json-rpc.ts) */
  messagesDropped: Counter;
  /** labels kind: decimals | listing, result: accepted | refused */
  registryChanges: Counter;
  /** label pair (base symbol): the curve's mid against its reference, signed bps */
  referenceDeviation: Gauge;
  /** label pair: the reference's age at the block, s */
  referenceAge: Gauge;
  /** labels pair, mode: 1 while the band does not let the pair be served (withheld in enforce mode) */
  referenceOutOfBand: Gauge;
  /** labels pair, status: 1 for the pair's status at the last block (core's ReferenceStatus) */
  referenceStatus: Gauge;
}

export function createIndexerMetrics(opts: { chainId: number; defaultMetrics?: boolean }): IndexerMetrics {
  const metrics: Metrics = createMetrics('indexer', opts);
  metrics.registry.setDefaultLabels({ service: 'indexer', chain: String(opts.chainId) });
  const out = {
    metrics,
    registry: metrics.registry,
    headBlock: metrics.gauge('indexer_head_block', 'Newest block number seen from the node', []),
    bookBlock: metrics.gauge('indexer_book_block', 'Block number of the last book this replica wrote', []),
    blockToBook: metrics.histogram(
      'indexer_block_to_book_seconds',
      'From the first sight of a block to its book written in Redis',
      [],
      BLOCK_LATENCY_BUCKETS,
    ),
    computeSeconds: metrics.histogram(
      'indexer_block_compute_seconds',
      'Time to compute and write one block',
      [],
      BLOCK_LATENCY_BUCKETS,
    ),
    ethCallsPerBlock: metrics.histogram(
      'indexer_eth_calls_per_block',
      'eth_call requests sent to the node per computed block',
      [],
      CALLS_BUCKETS,
    ),
    ethCalls: metrics.counter('indexer_eth_calls_total', 'eth_call requests sent to the node', ['purpose'] as const),
    quoteCallsPerBlock: metrics.gauge('indexer_quote_calls_per_block', 'quote() calls inside the last block call', []),
    blocks: metrics.counter('indexer_blocks_total', 'Block jobs handled by this replica, by outcome', [
      'outcome',
    ] as const),
    rpcErrors: metrics.counter('indexer_rpc_errors_total', 'Failed node requests, by what they were for', [
      'purpose',
    ] as const),
    reconnects: metrics.counter('indexer_node_reconnects_total', 'Node reconnect attempts', []),
    nodeUp: metrics.gauge('indexer_node_up', '1 while the node connection is up', []),
    pairs: metrics.gauge('indexer_pairs', 'Pairs tracked (from the registry)', []),
    registryRefreshes: metrics.counter('indexer_registry_refreshes_total', 'Registry refreshes, by result', [
      'result',
    ] as const),
    booksDeleted: metrics.counter('indexer_books_deleted_total', 'Books removed because the node was lost', []),
    silentCallFailures: metrics.counter(
      'indexer_calls_failed_without_data_total',
      'Calls in the block call that failed without revert data (likely out of gas: raise CALL_GAS)',
      [],
    ),
    headLag: metrics.gauge(
      'indexer_head_lag_seconds',
      "Age of the node's newest head by this machine's clock (now minus the block's timestamp)",
      [],
    ),
    maxHeadLag: metrics.gauge(
      'indexer_max_head_lag_seconds',
      'MAX_HEAD_LAG_MS of this replica, seconds: heads older than this are not computed and books expire by then',
      [],
    ),
    headLead: metrics.gauge(
      'indexer_head_lead_seconds',
      "How far the node's newest head is stamped ahead of this machine's clock (its timestamp minus now; 0 when not ahead)",
      [],
    ),
    maxHeadLead: metrics.gauge(
      'indexer_max_head_lead_seconds',
      'MAX_HEAD_LEAD_MS of this replica, seconds: heads stamped further ahead of the clock than this are not computed',
      [],
    ),
    headsRefused: metrics.counter(
      'indexer_heads_refused_total',
      'Heads not computed: older than MAX_HEAD_LAG_MS, ahead of the clock by more than MAX_HEAD_LEAD_MS, or an unconfirmed jump of more than MAX_HEAD_JUMP blocks',
      ['reason'] as const,
    ),
    messagesDropped: metrics.counter(
      'indexer_node_messages_dropped_total',
      'Messages from the node thrown away: above MAX_RPC_ANSWER_BYTES, malformed, for nothing pending, or a redirect (never followed)',
      ['reason'] as const,
    ),
    registryChanges: metrics.counter(
      'indexer_registry_changes_total',
      'Changes of the pair registry (listing or decimals), accepted after a second read or refused',
      ['kind', 'result'] as const,
    ),
    referenceDeviation: metrics.gauge(
      'indexer_reference_deviation_bps',
      "Each pair's curve mid against its reference at the last computed block, signed bps (positive: above)",
      ['pair'] as const,
    ),
    referenceAge: metrics.gauge(
      'indexer_reference_age_seconds',
      "Age of each pair's reference at the last computed block (the block's time less the feed's updatedAt), s",
      ['pair'] as const,
    ),
    referenceOutOfBand: metrics.gauge(
      'indexer_reference_out_of_band',
      '1 while a pair is out of its band, or its reference stale or unreadable, until it is back for its recovery blocks ' +
        '(withheld when mode is enforce, only reported when watch)',
      ['pair', 'mode'] as const,
    ),
    referenceStatus: metrics.gauge(
      'indexer_reference_status',
      "1 for each pair's status against its reference at the last computed block: in_band, out_of_band, stale, unreadable, no_curve",
      ['pair', 'status'] as const,
    ),
  };
  // The series the alert rules count failures on exist from the start at 0: a counter that
  // appears at 1 shows no increase() to Prometheus, so the first failure would go unseen.
  out.blocks.inc({ outcome: 'failed' }, 0);
  for (const purpose of ['block', 'registry']) out.rpcErrors.inc({ purpose }, 0);
  for (const reason of ['lagging', 'ahead', 'jump'] satisfies HeadRefusal[]) out.headsRefused.inc({ reason }, 0);
  for (const reason of ['oversized', 'malformed', 'unexpected', 'redirect'] satisfies DroppedReason[])
    out.messagesDropped.inc({ reason }, 0);
  for (const kind of ['decimals', 'listing'])
    for (const result of ['accepted', 'refused']) out.registryChanges.inc({ kind, result }, 0);
  return out;
}
