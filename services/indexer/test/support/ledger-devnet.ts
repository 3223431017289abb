/**
 * For the ledger's devnet tests: the system they run (one chain mining a block a second, the
 * indexer, signer, gateway and the ledger, as `npm start` runs them), where the ledger is, and
 * `npm run markouts` and `npm run fills` in-process as the operator runs them beside that system:
 * as the operator's Redis user, the ledger and the audit trail on the records' server and the mids
 * on the rebuildable one; and what a test drives beside it (ledgerTestbed).
 */
import {
  DEFAULT_KEY_PREFIX,
  closeRedisConnections,
  createRedis,
  parseLedgerCursor,
  redisKeys,
  redisReady,
  type RedisClient,
  type RedisKeys,
} from '@pmm/core';
import { AuditReader, LedgerReader, runFillsCommand, runMarkoutsCommand } from '@pmm/operator';
import {
  approveRouter,
  startSystem,
  swapChain,
  until,
  type SwapChain,
  type System,
  type SystemOptions,
} from '@pmm/testkit';
import { createTestClient, http, type Hex } from 'viem';

/**
 * How far ahead of the wall clock a test that moves its chain on to a markout horizon
 * ({@link mineAhead}) lets the indexer and the ledger follow it (MAX_HEAD_LEAD_MS, default 5 s):
 * the 60 s horizon, a block a second up to the 25b one, and a margin for a loaded machine.
 */
export const CLOCK_AHEAD_MS = 120_000;

/**
 * The system on chain `chainId` alone; `ledger`: the ledger's own settings (its limits); `market`:
 * a moving market (still without); `clockAhead`: the indexer and the ledger follow blocks stamped
 * up to {@link CLOCK_AHEAD_MS} ahead of the wall clock (for {@link mineAhead}).
 */
export const startLedgerSystem = (
  chainId: number,
  ledger: Readonly<Record<string, string>> = {},
  market?: SystemOptions['market'],
  { clockAhead = false }: { clockAhead?: boolean } = {},
): Promise<System> => {
  const lead: Record<string, string> = clockAhead ? { MAX_HEAD_LEAD_MS: String(CLOCK_AHEAD_MS) } : {};
  return startSystem({
    chains: [chainId],
    blockIntervalMs: 1_000,
    market,
    services: ['indexer', 'signer', 'gateway', 'ledger'],
    // These tests move the market by moving curves alone, or hold a curve still while the market
    // moves: the references only watch (docs/operations/references.md).
    env: { ledger: { ...ledger, ...lead }, indexer: { REFERENCE_MODE: 'watch', ...lead } },
  });
};

/**
 * Moves the chain on to a markout horizon instead of waiting for the wall clock: mines at once
 * (interval mining paused meanwhile) the blocks up to `blocks` after the block holding
 * transaction `hash`, at least one, the first stamped `seconds` after that block (or a second
 * after the head, if that is later) and each next one a second later; interval mining then goes
 * on from there. The system must have been started with `clockAhead`: its indexer and ledger
 * refuse a head stamped more than MAX_HEAD_LEAD_MS ahead of the wall clock.
 */
export async function mineAhead(x: SwapChain, hash: Hex, to: { blocks: number; seconds: number }): Promise<void> {
  const { blockNumber } = await x.pub.getTransactionReceipt({ hash });
  const { timestamp } = await x.pub.getBlock({ blockNumber });
  const anvil = createTestClient({ mode: 'anvil', transport: http(x.c.rpcUrl) });
  await anvil.setIntervalMining({ interval: 0 });
  try {
    const head = await x.pub.getBlock();
    const first = timestamp + BigInt(to.seconds);
    await anvil.setNextBlockTimestamp({ timestamp: first > head.timestamp ? first : head.timestamp + 1n });
    // A second apart (anvil would stamp them all alike): the 60 s horizon then reads one block,
    // the same in the ledger and in `npm run markouts`.
    await anvil.mine({ blocks: Math.max(1, Number(blockNumber + BigInt(to.blocks) - head.number)), interval: 1 });
  } finally {
    await anvil.setIntervalMining({ interval: 1 });
  }
}

/**
 * Sends every calldata to the router in one block of the system's chain (its interval mining,
 * a block a second): mining paused, consecutive nonces, one block mined; each must succeed.
 */
export async function inOneBlock(x: SwapChain, calldatas: Hex[]): Promise<Hex[]> {
  const anvil = createTestClient({ mode: 'anvil', transport: http(x.c.rpcUrl) });
  await anvil.setIntervalMining({ interval: 0 });
  const hashes: Hex[] = [];
  try {
    const nonce = await x.pub.getTransactionCount({ address: x.user.account.address, blockTag: 'pending' });
    for (const [i, data] of calldatas.entries())
      hashes.push(
        await x.user.sendTransaction({ to: x.c.contracts.router as Hex, data, nonce: nonce + i, gas: 500_000n }),
      );
    await anvil.mine({ blocks: 1 });
  } finally {
    await anvil.setIntervalMining({ interval: 1 });
  }
  const receipts = await Promise.all(hashes.map((hash) => x.pub.waitForTransactionReceipt({ hash })));
  if (receipts.some((r) => r.status !== 'success')) throw new Error('a swap sent in one block reverted');
  if (new Set(receipts.map((r) => r.blockNumber)).size !== 1) throw new Error('the swaps landed in several blocks');
  return hashes;
}

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

/**
 * What a ledger test drives beside its system on chain `chainId` (the `dev` integrator's swaps):
 * the taker (every allowance given for WETH and the quote token), the records' server as its
 * administrator, `npm run markouts` as the operator runs it, the ledger's metrics; ready once the
 * ledger follows the head (it starts at the head it first sees: the swaps after come after it).
 */
export async function ledgerTestbed(sys: System, chainId: number, name: string) {
  const keys = redisKeys(DEFAULT_KEY_PREFIX);
  const x = swapChain(sys, chainId);
  const weth = x.c.tokens.WETH!.address as Hex;
  const quote = x.c.quoteToken.address as Hex;
  const redis = createRedis(sys.redisRecordsUrl, { name });
  await redisReady(redis);
  const markoutsCli = await markoutsCommand(sys, keys);
  for (const token of [weth, quote]) await approveRouter(x, token, 2n ** 255n);
  const head = Number(await x.pub.getBlockNumber());
  await until(async () => (await ledgerCursorOf(redis, keys, chainId)) >= head, 60_000, 'the ledger following', 200);
  return {
    keys,
    x,
    weth,
    quote,
    redis,
    /** `npm run markouts` of the chain, from yesterday to tomorrow. */
    markouts: (format: 'json' | 'csv' | 'table') =>
      markoutsCli.run([
        '--from',
        dayFromNow(-1),
        '--to',
        dayFromNow(1),
        '--chain',
        String(chainId),
        '--format',
        format,
      ]),
    /** The ledger's series `name` of `integrator` (its last value as text), or undefined. */
    async metric(metricName: string, integrator: string): Promise<string | undefined> {
      const text = await (await fetch(sys.processesOf('ledger')[0]!.metricsUrl!)).text();
      return text
        .split('\n')
        .find((l) => l.startsWith(`${metricName}{`) && l.includes(`integrator="${integrator}"`))
        ?.split(' ')
        .at(-1);
    },
    async close() {
      redis.disconnect();
      await markoutsCli.close();
    },
  };
}
