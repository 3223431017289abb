/**
 * @pmm/operator: the operator's `audit`, `settle`, `markouts` and `risk` commands (dist/cli/audit.js,
 * dist/cli/settle.js, …; README.md). They read the chains, the audit trail and the ledger and hold
 * no key; they are not in the service image. These exports serve the indexer's ledger (the swap
 * scan, the attribution, the markouts), tests and benchmarks.
 */
export { AuditReader } from './store/audit-reader';
export type { AuditEntry, AuditFilter } from './store/audit-reader';
export { runAuditCommand } from './cli/audit-command';
export type { AuditCommandDeps } from './cli/audit-command';
export { SETTLE_INCOMPLETE, runSettleCommand } from './cli/settle-command';
export type { SettleCommandDeps } from './cli/settle-command';
export { createChainReader } from './chain/chain-reader';
export type { ChainReader, ChainTransaction, TokenMeta, TransferLog } from './chain/chain-reader';
export { scanSwaps } from './settlement/scan-swaps';
export type { OnChainSwap } from './settlement/scan-swaps';
export { buildSettlement } from './settlement/settlement-report';
export { quoteGapBps } from './settlement/quote-gap';
export { attributeSwap } from './settlement/attribute-swap';
export type { Attribution, SignatureRecords } from './settlement/attribute-swap';
export { routerSwapCalls } from './settlement/scan-swaps';
export { TracerChoice } from './chain/call-trace';
export type { SettlementReport, SwapLine, SummaryLine } from './settlement/settlement-report';
export { csvLine } from './csv';
export { ledgerEntryOf, executionPrice } from './ledger/swap-entry';
export type { EntryTokens } from './ledger/swap-entry';
export {
  HORIZONS,
  NO_MARKOUT_ZERO_LEG,
  markoutBps,
  markoutPrice,
  markoutQuote,
  markoutTarget,
  recordAt,
  swapMarkouts,
  targetReached,
} from './ledger/markouts';
export type { Horizon, HorizonKey, MarkoutTarget, Markouts, NoMarkout } from './ledger/markouts';
export { buildMarkoutReport, statsOf } from './ledger/markout-report';
export type { MarkoutReport, SwapMarkoutLine } from './ledger/markout-report';
export { LedgerReader } from './store/ledger-reader';
export { runMarkoutsCommand } from './cli/markouts-command';
export { runRiskCommand } from './cli/risk-command';
