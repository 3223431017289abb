/**
 * @pmm/indexer: follows one chain's blocks and keeps its orderbook and pair registry in
 * Redis. `main.ts` runs it; these exports are for tests, benchmarks and tools.
 */
export { startIndexer } from './indexer';
export type { IndexerDeps, RunningIndexer } from './indexer';
export { INDEXER_SETTINGS, loadIndexerConfig } from './config';
export type { IndexerConfig } from './config';
export {
  DEFAULT_ASK_NOTIONALS,
  FALLBACK_BID_AMOUNTS,
  MAX_LADDER_POINTS,
  askLadder,
  bidAmountsFromNotionals,
  needsBidProbe,
  parseLadderConfig,
  resolveLadder,
  toRawAmounts,
} from './domain/ladder';
export type { LadderConfig, LadderSpec, ProbePrice, RawLadder } from './domain/ladder';
export { pairBook, usableSamples } from './domain/pair-book';
export { backoffDelay } from './domain/backoff';
export type { BackoffBounds } from './domain/backoff';
export {
  AGGREGATE3_SELECTOR,
  QUOTE_SELECTOR,
  decodeAggregate3,
  decodeUintResult,
  encodeAggregate3,
  quoteCalldataBuilder,
} from './chain/call-codec';
export type { Call, CallResult } from './chain/call-codec';
export { startBlockSource, parseHeader } from './chain/block-source';
export type { BlockHead, BlockSource, BlockSourceOptions } from './chain/block-source';
export { openWsTransport } from './chain/ws-transport';
export { createHttpTransport } from './chain/http-transport';
export { RpcConnectionError, RpcError, RpcTimeoutError } from './chain/json-rpc';
export type { RpcTransport } from './chain/json-rpc';
export { createBookStore, bookBlockKey } from './store/book-store';
export type { BookStore } from './store/book-store';
export { blockJobId, BLOCK_QUEUE_NAME } from './jobs/block-queue';
export type { BlockJobData } from './jobs/block-queue';
export type { BlockEvent } from './jobs/block-processor';
