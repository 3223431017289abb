/**
 * `npm run bench ledger-traces`: where the ledger's time goes with reverted router calls on anvil,
 * side by side on one block of 50 swaps and 20 reverted calls (record 0072): the block's receipts;
 * the failed transactions' callTracer traces one at a time, all at once (the ledger sends them
 * together), and the whole block traced once with the callTracer (`debug_traceBlockByNumber`, what
 * would replace them); the parity traces of the failed transactions and of the block (`trace_*`,
 * which anvil keeps from mining). Each way is measured BENCH_ROUNDS times (median and spread), and
 * what each gives is compared: the block's trace of each failed transaction must be the very
 * frame tree its own trace gives, and a parity trace is usable only if it carries the router's
 * revert data (the reason). Then the ledger's own scan of the block's reverted calls
 * (scanBlockReverts: receipts, each failed transaction, its trace), with each tracer, timed and
 * compared call by call (reason and arguments).
 *
 * The block is made whole: interval mining stopped, the 70 transactions sent, one block mined.
 * Environment: BENCH_SWAPS (50), BENCH_REVERTS (20), BENCH_ROUNDS (5).
 */
import { createChainReader, scanBlockReverts, TracerChoice, type OnChainRevert } from '@pmm/operator';
import { routerLoad } from './router-load';

const SWAPS = Number(process.env.BENCH_SWAPS ?? 50);
const REVERTS = Number(process.env.BENCH_REVERTS ?? 20);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

type Frame = { error?: string; output?: string; calls?: Frame[] };

const median = (values: number[]) => {
  const s = [...values].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

async function timed<T>(rounds: number, work: () => Promise<T>): Promise<{ ms: number[]; result: T }> {
  const ms: number[] = [];
  let result!: T;
  for (let i = 0; i < rounds; i++) {
    const start = performance.now();
    result = await work();
    ms.push(performance.now() - start);
  }
  return { ms, result };
}

/** True when some failed frame of the tree carries revert data (a selector at least). */
function hasRevertData(frame: Frame): boolean {
  if (frame.error && typeof frame.output === 'string' && frame.output.length >= 10) return true;
  return (frame.calls ?? []).some(hasRevertData);
}

async function main(): Promise<void> {
  const {
    sys,
    chain: c,
    provider,
    user,
    swapData,
  } = await routerLoad({
    blockIntervalMs: 2_000,
    redisUrl: REDIS_URL,
    batchMaxCount: 1,
  });

  // One block holding every transaction: mining stopped, the transactions sent, one block mined.
  await provider.send('evm_setIntervalMining', [0]);
  const timestamp = BigInt(Math.floor(Date.now() / 1000));
  const sent = [];
  for (let i = 0; i < SWAPS + REVERTS; i++)
    sent.push(
      await user.sendTransaction({
        to: c.contracts.router,
        data: swapData(i, timestamp, i >= SWAPS),
        gasLimit: 300_000n,
      }),
    );
  await provider.send('evm_mine', []);
  // The first is a swap (the last reverts, which ethers' wait() throws on).
  const receipt = await sent[0]!.wait();
  const block = `0x${receipt!.blockNumber.toString(16)}`;

  const receipts = await timed(
    ROUNDS,
    () => provider.send('eth_getBlockReceipts', [block]) as Promise<{ status: string; transactionHash: string }[]>,
  );
  const failed = receipts.result.filter((r) => Number(r.status) === 0).map((r) => r.transactionHash);
  const traceTx = (hash: string) =>
    provider.send('debug_traceTransaction', [hash, { tracer: 'callTracer' }]) as Promise<Frame>;
  const oneByOne = await timed(ROUNDS, async () => {
    const out: Frame[] = [];
    for (const hash of failed) out.push(await traceTx(hash));
    return out;
  });
  const together = await timed(ROUNDS, () => Promise.all(failed.map(traceTx)));
  const wholeBlock = await timed(
    ROUNDS,
    () =>
      provider.send('debug_traceBlockByNumber', [block, { tracer: 'callTracer' }]) as Promise<
        { txHash?: string; result: Frame }[]
      >,
  );
  const parityTx = await timed(ROUNDS, () =>
    Promise.all(
      failed.map((hash) => provider.send('trace_transaction', [hash]) as Promise<(Frame & { result?: Frame })[]>),
    ),
  );
  const parityBlock = await timed(ROUNDS, () => provider.send('trace_block', [block]) as Promise<unknown[]>);

  // The block's trace of each failed transaction, by hash (or by position, for a node that gives no hash).
  const hashes = receipts.result.map((r) => r.transactionHash);
  const inBlock = new Map(wholeBlock.result.map((t, i) => [(t.txHash ?? hashes[i]!).toLowerCase(), t.result] as const));
  const same = failed.every(
    (hash, i) => JSON.stringify(inBlock.get(hash.toLowerCase())) === JSON.stringify(oneByOne.result[i]),
  );
  // Parity frames: anvil's carry `error` and, when it has it, the revert data as `result.output`.
  const parityReasons = parityTx.result.filter((frames) =>
    frames.some((f) => Boolean(f.error) && typeof f.result?.output === 'string' && f.result.output.length >= 10),
  ).length;

  // The ledger's own scan, with each tracer.
  const reader = createChainReader(8453, c.rpcUrl);
  const header = (await provider.send('eth_getBlockByNumber', [block, false])) as { timestamp: string };
  const scanWith = (kind: 'callTracer' | 'parity') =>
    timed(ROUNDS, () =>
      scanBlockReverts({
        reader,
        tracer: new TracerChoice(kind),
        router: c.contracts.router,
        blockNumber: receipt!.blockNumber,
        blockTime: Number(header.timestamp),
        concurrency: 64,
      }),
    );
  const byCall = await scanWith('callTracer');
  const byParity = await scanWith('parity');
  const calls = (found: OnChainRevert[]) =>
    JSON.stringify(
      found
        .map((r) => [r.txHash, r.callIndex, r.via, r.reason, r.args, r.txReverted, r.user])
        .sort((a, b) => String(a[0]).localeCompare(String(b[0]))),
    );
  const scansAgree = calls(byCall.result.reverts) === calls(byParity.result.reverts);
  const reasons = (found: OnChainRevert[]) => [...new Set(found.map((r) => r.reason))].join(',');

  const row = (what: string, t: { ms: number[] }, note = '') =>
    console.log(
      `${what.padEnd(58)} | ${median(t.ms).toFixed(0).padStart(8)} | ${Math.min(...t.ms)
        .toFixed(0)
        .padStart(6)} | ${Math.max(...t.ms)
        .toFixed(0)
        .padStart(6)} | ${note}`,
    );
  console.log(
    `ledger traces: one block of ${receipts.result.length} transactions, ${failed.length} failed (anvil), ${ROUNDS} rounds each`,
  );
  console.log(`${'way'.padEnd(58)} | med (ms) |    min |    max | what it gives`);
  row('eth_getBlockReceipts', receipts, `${failed.length} failed found`);
  row(
    `debug_traceTransaction callTracer x${failed.length}, one at a time`,
    oneByOne,
    `reasons in ${oneByOne.result.filter(hasRevertData).length}/${failed.length}`,
  );
  row(
    `debug_traceTransaction callTracer x${failed.length}, all at once`,
    together,
    `reasons in ${together.result.filter(hasRevertData).length}/${failed.length}`,
  );
  row(
    `debug_traceBlockByNumber callTracer (${wholeBlock.result.length} traces)`,
    wholeBlock,
    `the failed transactions' frames ${same ? 'identical to' : 'DIFFERENT from'} their own traces`,
  );
  row(
    `trace_transaction (parity) x${failed.length}, all at once`,
    parityTx,
    `revert data in ${parityReasons}/${failed.length}`,
  );
  row('trace_block (parity)', parityBlock, `${parityBlock.result.length} frames`);
  row(
    "the ledger's scanBlockReverts, callTracer",
    byCall,
    `${byCall.result.reverts.length} reverted calls (${reasons(byCall.result.reverts)})`,
  );
  row(
    "the ledger's scanBlockReverts, parity",
    byParity,
    `${byParity.result.reverts.length} reverted calls, ${scansAgree ? 'the same' : 'NOT the same'} as with callTracer`,
  );
  console.log(
    `ratio: the ledger's scan with parity / with callTracer = ${(median(byParity.ms) / median(byCall.ms)).toFixed(3)}`,
  );
  console.log(
    `ratio: whole block / failed ones traced at once = ${(median(wholeBlock.ms) / median(together.ms)).toFixed(2)}; at once / one at a time = ${(median(together.ms) / median(oneByOne.ms)).toFixed(2)}`,
  );
  provider.destroy();
  await sys.stop();
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
