/**
 * The ledger's entry point: `node services/indexer/dist/ledger-main.js` (one process per chain,
 * one replica: the ledger is a single writer). Built with the indexer, whose node connection and
 * head guard it uses (docs/decisions/0048-the-makers-ledger-its-own-process-built-with-the-indexer.md); its own settings, Redis user and
 * operator port (start-up, errors and exit codes: core's runService).
 */
import { runService } from '@pmm/core';
import { LEDGER_SETTINGS, loadLedgerConfig } from './ledger/ledger-config';
import { startLedger } from './ledger/ledger';

void runService({
  name: 'ledger',
  settings: LEDGER_SETTINGS,
  loadConfig: loadLedgerConfig,
  start: async (config, logger) => {
    const ledger = await startLedger(config, { logger });
    return { served: [ledger.served], close: ledger.stop };
  },
});
