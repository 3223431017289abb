/**
 * `npm run bench ledger`: how far the maker's ledger stays behind the head (blocks, p50/p99, and
 * the time from a block's first sight to its commit) on one devnet chain (8453, anvil) mining a
 * block every 2 s, with 50 swaps in every block, then 50 swaps and 20 reverted router calls (each
 * a failed transaction the ledger finds in the block's receipts and traces), traced with the
 * callTracer (LEDGER_TRACER=auto's first choice) and with anvil's parity traces (what `npm start`'s
 * ledgers use: ledger-traces.bench.ts compares the two); beside its bare twin, the same ledger
 * over the same chain with no swap (what following blocks costs alone).
 *
 * The swaps are the router's, signed with the chain's API key outside the service (each its own
 * signature, so the attribution looks each up in the audit trail, and finds none): what the
 * ledger does per swap is the same (logs, the transaction, the trail), attributed or not.
 * The ledger runs in this process on the Redis `npm run bench` gives it (REDIS_URL).
 * Goal: lag p99 at most 2 blocks at 50 swaps and 20 reverted calls per block.
 * Environment: BENCH_SWAPS_PER_BLOCK (50), BENCH_REVERTS_PER_BLOCK (20), BENCH_BLOCK_INTERVAL_MS
 * (2000), BENCH_SAMPLES (20).
 */
import { createLogger } from '@pmm/core';
import { loadLedgerConfig, startLedger } from '@pmm/indexer';
import { routerLoad } from './router-load';

const SWAPS = Number(process.env.BENCH_SWAPS_PER_BLOCK ?? 50);
const REVERTS = Number(process.env.BENCH_REVERTS_PER_BLOCK ?? 20);
const BLOCK_INTERVAL_MS = Number(process.env.BENCH_BLOCK_INTERVAL_MS ?? 2_000);
const SAMPLES = Number(process.env.BENCH_SAMPLES ?? 20);
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

async function main(): Promise<void> {
  const {
    sys,
    chain: c,
    provider,
    user,
    swapData,
  } = await routerLoad({
    blockIntervalMs: BLOCK_INTERVAL_MS,
    redisUrl: REDIS_URL,
    batchMaxCount: 100,
  });

  const rows: string[] = [];
  for (const [swapsPerBlock, revertsPerBlock, tracer] of [
    [0, 0, 'auto'],
    [SWAPS, 0, 'auto'],
    [SWAPS, REVERTS, 'callTracer'],
    [SWAPS, REVERTS, 'parity'],
  ] as const) {
    const prefix = `bench-ledger-${swapsPerBlock}-${revertsPerBlock}-${Date.now()}`;
    const lags: number[] = [];
    const commitMs: number[] = [];
    let swapsSeen = 0;
    let revertsSeen = 0;
    let resolveDone!: () => void;
    const done = new Promise<void>((r) => (resolveDone = r));
    const config = loadLedgerConfig({
      env: {
        CHAIN_ID: '8453',
        CHAINS: JSON.stringify({ 8453: { chainId: 8453, rpcUrl: c.rpcUrl, wsUrl: c.wsUrl, contracts: c.contracts } }),
        REDIS_URL,
        REDIS_KEY_PREFIX: prefix,
        PORT: '0',
        LEDGER_TRACER: tracer,
      },
      file: {},
    });
    let skip = 2; // the first blocks: the ledger starts, the load starts
    const ledger = await startLedger(config, {
      logger: createLogger({ service: 'ledger', level: 'error' }),
      defaultMetrics: false,
      onCommit: (_block, entries, head, reverts) => {
        if (skip-- > 0) return;
        revertsSeen += reverts.length;
        lags.push(Math.max(0, head.number - _block));
        commitMs.push(Date.now() - head.seenAt);
        swapsSeen += entries.length;
        if (lags.length >= SAMPLES) resolveDone();
      },
    });
    // The load: `swapsPerBlock` swaps sent at each new block, each with its own signature, and
    // `revertsPerBlock` that revert (a minimum no curve pays: InsufficientOutput).
    let stop = false;
    const load = (async () => {
      let last = await provider.getBlockNumber();
      let n = 0;
      while (!stop) {
        const head = await provider.getBlockNumber();
        if (head === last) {
          await new Promise((r) => setTimeout(r, 100));
          continue;
        }
        last = head;
        const timestamp = BigInt(Math.floor(Date.now() / 1000));
        const sends = [];
        for (let i = 0; i < swapsPerBlock + revertsPerBlock; i++) {
          const data = swapData(n++, timestamp, i >= swapsPerBlock);
          sends.push(user.sendTransaction({ to: c.contracts.router, data, gasLimit: 300_000n }));
        }
        await Promise.all(sends);
      }
    })();
    const giveUp = setTimeout(resolveDone, SAMPLES * BLOCK_INTERVAL_MS * 3 + 30_000);
    await done;
    clearTimeout(giveUp);
    stop = true;
    await load;
    await ledger.stop();
    lags.sort((a, b) => a - b);
    commitMs.sort((a, b) => a - b);
    rows.push(
      `${String(swapsPerBlock).padStart(11)} | ${String(revertsPerBlock).padStart(13)} | ${tracer.padEnd(10)} | ${String(lags.length).padStart(6)} | ` +
        `${(swapsSeen / Math.max(1, lags.length)).toFixed(1).padStart(14)} | ${(revertsSeen / Math.max(1, lags.length)).toFixed(1).padStart(16)} | ` +
        `${percentile(lags, 50).toFixed(0).padStart(13)} | ${percentile(lags, 99).toFixed(0).padStart(13)} | ` +
        `${percentile(commitMs, 50).toFixed(0).padStart(14)} | ${percentile(commitMs, 99).toFixed(0).padStart(14)}`,
    );
  }
  console.log(`ledger: block interval ${BLOCK_INTERVAL_MS} ms, ${SAMPLES} blocks per row`);
  console.log(
    'swaps/block | reverts/block | tracer     | blocks | swaps/blk seen | reverts/blk seen | lag p50 (blk) | lag p99 (blk) | commit p50 (ms) | commit p99 (ms)',
  );
  for (const r of rows) console.log(r);
  console.log(
    'goal: lag p99 <= 2 blocks at 50 swaps and 20 reverted calls per block; commit = first sight of the head to the block committed',
  );
  provider.destroy();
  await sys.stop();
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
