/**
 * @pmm/operator: the operator's `audit`, `settle`, `markouts`, `fills` and `risk` commands (dist/audit/audit.js,
 * dist/settle/settle.js, …; README.md). They read the chains, the audit trail and the ledger and hold
 * no key; they are not in the service image. These exports serve the indexer's ledger (the swap
 * scan, the attribution, the markouts), tests and benchmarks.
 */

// The commands, one folder each.
export { runAuditCommand } from './audit/audit-command';
export type { AuditCommandDeps } from './audit/audit-command';
export { SETTLE_INCOMPLETE, runSettleCommand } from './settle/settle-command';
export type { SettleCommandDeps } from './settle/settle-command';
export { buildSettlement } from './settle/settlement-report';
export type { SettlementReport, SwapLine, SummaryLine } from './settle/settlement-report';
export { runMarkoutsCommand } from './markouts/markouts-command';
export { runFillsCommand } from './fills/fills-command';
export type { FillReport } from './fills/fill-report';
export { buildMarkoutReport, markoutCsv, markoutTable, statsOf } from './markouts/markout-report';
export type { MarkoutReport, SwapMarkoutLine } from './markouts/markout-report';
export { runRiskCommand } from './risk/risk-command';

// What they share: the readers, the swap scan and attribution, the command line's CSV.
export { AuditReader } from './audit-trail/audit-reader';
export type { AuditEntry, AuditFilter } from './audit-trail/audit-reader';
export { LedgerReader } from './ledger/ledger-reader';
export { ledgerEntryOf, executionPrice } from './ledger/swap-entry';
export type { EntryTokens } from './ledger/swap-entry';
export {
  HORIZONS,
  NO_MARKOUT_ZERO_LEG,
  markAt,
  markoutBps,
  markoutPrice,
  markoutQuote,
  markoutTarget,
  recordAt,
  swapMarkouts,
  targetReached,
} from './ledger/markouts';
export type { Horizon, HorizonKey, MarkoutBasis, MarkoutTarget, Markouts, NoMarkout } from './ledger/markouts';
export { createChainReader } from './chain/chain-reader';
export type { ChainReader, ChainTransaction, TokenMeta, TransferLog } from './chain/chain-reader';
export { TracerChoice } from './chain/call-trace';
export { scanSwaps, routerSwapCalls } from './swaps/scan-swaps';
export type { OnChainSwap } from './swaps/scan-swaps';
export { attributeRevert, attributeSwap } from './swaps/attribute-swap';
export { scanBlockReverts } from './swaps/scan-reverts';
export { ledgerRevertOf } from './ledger/revert-entry';
export type { BlockRevertScan } from './swaps/scan-reverts';
export { CALLER_REVERTED } from './swaps/router-call';
export type { OnChainRevert, SignedCall } from './swaps/router-call';
export type { Attribution, SignatureRecords } from './swaps/attribute-swap';
export { csvLine } from './cli/csv';
