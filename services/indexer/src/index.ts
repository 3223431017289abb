/**
 * @pmm/indexer: follows one chain's blocks and keeps its orderbook and pair registry in
 * Redis. `main.ts` runs it; these exports are for tests, benchmarks and tools (the modules
 * behind them are tested through their own paths).
 */
export { startIndexer } from './indexer';
export type { RunningIndexer } from './indexer';
export { INDEXER_SETTINGS, loadIndexerConfig } from './config';
export { startLedger } from './ledger/ledger';
export type { RunningLedger } from './ledger/ledger';
export { LEDGER_SETTINGS, loadLedgerConfig } from './ledger/ledger-config';
export { createLedgerMetrics } from './ledger/ledger-metrics';
export { createLedgerStore, ledgerStoreKeys, type LedgerKeys, type LedgerStore } from './ledger/ledger-store';
export { RollingMarkouts } from './ledger/rolling-markouts';
export { createBookStore } from './store/book-store';
export { askLadder, resolveLadder, type LadderConfig, type ProbePrice, type RawLadder } from './domain/ladder';
export type { BlockEvent } from './jobs/block-processor';
