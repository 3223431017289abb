/**
 * For the ledger's devnet tests: the system they run (one chain mining a block a second, the
 * indexer, signer, gateway and the ledger, as `npm start` runs them), where the ledger is, and
 * `npm run markouts` in-process as the operator runs it beside that system.
 */
import { parseLedgerCursor, type RedisClient, type RedisKeys } from '@pmm/core';
import { LedgerReader, runMarkoutsCommand } from '@pmm/settlement';
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

/** `npm run markouts -- <argv>` (settlement markouts-command.ts) on the system's Redis: exit code and output. */
export async function markoutsOf(
  redis: RedisClient,
  keys: RedisKeys,
  argv: string[],
): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const code = await runMarkoutsCommand(argv, {
    ledger: new LedgerReader(redis, () => Promise.resolve(redis), keys),
    out: (t) => (out += t),
    err: (l) => (err += `${l}\n`),
  });
  return { code, out, err };
}

/** The UTC day `offsetDays` from today, `2026-11-05`: a `--from` or `--to` around now. */
export const dayFromNow = (offsetDays: number): string =>
  new Date(Date.now() + offsetDays * 86_400_000).toISOString().slice(0, 10);
