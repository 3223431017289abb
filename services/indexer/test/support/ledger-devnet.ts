/**
 * For the ledger's devnet tests: the system they run (one chain mining a block a second, the
 * indexer, signer, gateway and the ledger, as `npm start` runs them), where the ledger is, and
 * `npm run markouts` in-process as the operator runs it beside that system: as the operator's
 * Redis user, the ledger on the records' server and the mids on the rebuildable one.
 */
import {
  closeRedisConnections,
  createRedis,
  parseLedgerCursor,
  redisReady,
  type RedisClient,
  type RedisKeys,
} from '@pmm/core';
import { LedgerReader, runMarkoutsCommand } from '@pmm/operator';
import { startSystem, type System } from '@pmm/testkit';

/** The system on chain `chainId` alone; `ledger`: the ledger's own settings (its limits). */
export const startLedgerSystem = (chainId: number, ledger: Readonly<Record<string, string>> = {}): Promise<System> =>
  startSystem({
    chains: [chainId],
    blockIntervalMs: 1_000,
    services: ['indexer', 'signer', 'gateway', 'ledger'],
    env: { ledger },
  });

/** The last block the chain's ledger has committed; -1 before its first. */
export async function ledgerCursorOf(redis: RedisClient, keys: RedisKeys, chainId: number): Promise<number> {
  const cursor = await redis.get(keys.ledgerCursor(chainId));
  return cursor === null ? -1 : parseLedgerCursor(cursor).number;
}

/** `npm run markouts` beside the system, on its own connections: its Redis user (`operator`) on each server. */
export interface MarkoutsCommand {
  /** `npm run markouts -- <argv>` (the operator package's markouts-command.ts): exit code and output. */
  run(argv: string[]): Promise<{ code: number; out: string; err: string }>;
  close(): Promise<void>;
}

export async function markoutsCommand(sys: System, keys: RedisKeys): Promise<MarkoutsCommand> {
  const env = sys.redisEnvOf('operator');
  // The ledger on the records' server, the mids on the rebuildable one.
  const records = createRedis(env.REDIS_RECORDS_URL, { name: 'markouts-test' });
  const mids = createRedis(env.REDIS_URL, { name: 'markouts-test-mids' });
  await Promise.all([redisReady(records), redisReady(mids)]);
  const ledger = new LedgerReader(records, () => Promise.resolve(mids), keys);
  return {
    async run(argv) {
      let out = '';
      let err = '';
      const code = await runMarkoutsCommand(argv, {
        ledger,
        out: (t) => (out += t),
        err: (l) => (err += `${l}\n`),
      });
      return { code, out, err };
    },
    close: () => closeRedisConnections([records, mids]),
  };
}

/** The UTC day `offsetDays` from today, `2026-11-05`: a `--from` or `--to` around now. */
export const dayFromNow = (offsetDays: number): string =>
  new Date(Date.now() + offsetDays * 86_400_000).toISOString().slice(0, 10);
