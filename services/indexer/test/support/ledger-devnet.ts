/**
 * For the ledger's devnet tests: the system they run (one chain mining a block a second, the
 * indexer, signer, gateway and the ledger, as `npm start` runs them), where the ledger is, and
 * `npm run markouts` and `npm run fills` in-process as the operator runs them beside that system:
 * as the operator's Redis user, the ledger and the audit trail on the records' server and the mids
 * on the rebuildable one.
 */
import {
  closeRedisConnections,
  createRedis,
  parseLedgerCursor,
  redisReady,
  type RedisClient,
  type RedisKeys,
} from '@pmm/core';
import { AuditReader, LedgerReader, runFillsCommand, runMarkoutsCommand } from '@pmm/operator';
import { startSystem, type System } from '@pmm/testkit';

/** The system on chain `chainId` alone; `ledger`: the ledger's own settings (its limits). */
export const startLedgerSystem = (chainId: number, ledger: Readonly<Record<string, string>> = {}): Promise<System> =>
  startSystem({
    chains: [chainId],
    blockIntervalMs: 1_000,
    services: ['indexer', 'signer', 'gateway', 'ledger'],
    // These tests move the market by moving curves alone: the references only watch (docs/operations/references.md).
    env: { ledger, indexer: { REFERENCE_MODE: 'watch' } },
  });

/** The last block the chain's ledger has committed; -1 before its first. */
export async function ledgerCursorOf(redis: RedisClient, keys: RedisKeys, chainId: number): Promise<number> {
  const cursor = await redis.get(keys.ledgerCursor(chainId));
  return cursor === null ? -1 : parseLedgerCursor(cursor).number;
}

/** An operator command beside the system, on its own connections: its Redis user (`operator`) on each server. */
export interface OperatorCommand {
  /** `npm run <command> -- <argv>` (the operator package's <command>-command.ts): exit code and output. */
  run(argv: string[]): Promise<{ code: number; out: string; err: string }>;
  close(): Promise<void>;
}
/** The markouts tests' name for it. */
export type MarkoutsCommand = OperatorCommand;

type CommandRunner = (
  argv: string[],
  readers: { ledger: LedgerReader; trail: AuditReader },
  io: { out(text: string): void; err(line: string): void },
) => Promise<number>;

async function operatorCommand(sys: System, keys: RedisKeys, command: CommandRunner): Promise<OperatorCommand> {
  const env = sys.redisEnvOf('operator');
  // The ledger and the audit trail on the records' server, the mids on the rebuildable one.
  const records = createRedis(env.REDIS_RECORDS_URL, { name: 'operator-test' });
  const mids = createRedis(env.REDIS_URL, { name: 'operator-test-mids' });
  await Promise.all([redisReady(records), redisReady(mids)]);
  const readers = {
    ledger: new LedgerReader(records, () => Promise.resolve(mids), keys),
    trail: new AuditReader(records, keys),
  };
  return {
    async run(argv) {
      let out = '';
      let err = '';
      const code = await command(argv, readers, { out: (t) => (out += t), err: (l) => (err += `${l}\n`) });
      return { code, out, err };
    },
    close: () => closeRedisConnections([records, mids]),
  };
}

/** `npm run markouts` beside the system. */
export const markoutsCommand = (sys: System, keys: RedisKeys): Promise<OperatorCommand> =>
  operatorCommand(sys, keys, (argv, { ledger }, io) => runMarkoutsCommand(argv, { ledger, ...io }));

/** `npm run fills` beside the system. */
export const fillsCommand = (sys: System, keys: RedisKeys): Promise<OperatorCommand> =>
  operatorCommand(sys, keys, (argv, readers, io) => runFillsCommand(argv, { ...readers, ...io }));

/** The UTC day `offsetDays` from today, `2026-11-05`: a `--from` or `--to` around now. */
export const dayFromNow = (offsetDays: number): string =>
  new Date(Date.now() + offsetDays * 86_400_000).toISOString().slice(0, 10);
