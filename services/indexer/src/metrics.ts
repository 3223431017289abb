/**
 * The indexer's metrics, declared up front (names, help, labels) on a per-instance registry.
 * Every series carries `chain` (and `service`) as a default label, so that one dashboard or
 * alert rule covers every chain's indexers and tells them apart.
 */
import { createMetrics, type Metrics } from '@pmm/core';

/** Block-to-book latency buckets, seconds: the goal is p99 < 100 ms on the devnet. */
const BLOCK_LATENCY_BUCKETS = [0.005, 0.01, 0.02, 0.03, 0.05, 0.075, 0.1, 0.15, 0.25, 0.5, 1, 2.5, 5, 10];
const CALLS_BUCKETS = [1, 2, 5, 10, 25, 50, 100, 250, 500, 1000, 2500];

export type BlockOutcome = 'written' | 'not_newer' | 'superseded' | 'already_stored' | 'failed';

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
  };
  // The series the alert rules count failures on exist from the start at 0: a counter that
  // appears at 1 shows no increase() to Prometheus, so the first failure would go unseen.
  out.blocks.inc({ outcome: 'failed' }, 0);
  for (const purpose of ['block', 'registry']) out.rpcErrors.inc({ purpose }, 0);
  return out;
}
