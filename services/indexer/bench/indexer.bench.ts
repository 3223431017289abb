/**
 * `npm run bench indexer`: block-to-book latency (p50/p99) and eth_calls per block for 10, 100
 * and 500 pairs on one devnet chain (8453, anvil) mining a block every 750 ms, with the default
 * ladder (12 points per side).
 *
 * The devnet seeds two base tokens; bench-pairs.ts lists extra TestTokens (6, 8 and 18
 * decimals) through the router's owner functions and mints them reserves. Latency runs
 * from the moment the indexer sees the head to the Lua write of the book in Redis; "compute"
 * is the part inside the worker (plan + the eth_call + decode + write), "eth_call" the node
 * round trip as the indexer sees it. A second table splits each block's time into the queue
 * hop, the plan (usually made ahead, during the previous call), the call and the write, and
 * gives what the indexer adds (all but the call). A third measures the node alone after each
 * row (block-call-alone.ts): the same call again at one block with the indexer stopped, the
 * signature checks alone, as many bare ecrecovers (the precompile alone: the floor of a router
 * that checks a signature per quote()), the gas and the sizes; that part the indexer cannot
 * shorten.
 *
 * Goals: exactly one eth_call per block whatever the number of pairs; at 100 pairs the book in
 * Redis within a tenth of the block interval at p99 (75 ms at 750 ms blocks).
 * Environment: BENCH_PAIRS (default 10,100,500), BENCH_BLOCK_INTERVAL_MS (750), BENCH_SAMPLES (30),
 * BENCH_CALL_GAS (1,000,000,000: the indexer's CALL_GAS and the devnet's block gas limit),
 * BENCH_MAX_ANSWER_BYTES (8 MiB: the indexer's MAX_RPC_ANSWER_BYTES; the answer of 500 pairs is
 * about 3.9 MB of JSON, above the 2 MiB default, which closes the socket at every block),
 * BENCH_NODE_ROUNDS (7: eth_calls per measure of the node alone, block-call-alone.ts),
 * BENCH_REFERENCE_PAIRS (100; 0: none): the last table (reference-rows.ts), each pair with a
 * reference feed beside the same pairs without, side by side in alternating rows: what reading
 * the feeds (two calls per pair in the same eth_call) and holding each pair to its band add to a
 * block, as a ratio; budget: at most 10 % of the node's time.
 * BENCH_PAIRS=100 BENCH_REFERENCE_PAIRS=100 npm run bench indexer.bench gives that table after one row.
 */
import Redis from 'ioredis';
import { createDigestSigner, redisKeys } from '@pmm/core';
import type { BlockEvent } from '@pmm/indexer';
import { startSystem } from '@pmm/testkit';
import { BenchPairs } from './bench-pairs';
import { measureBlockCallAlone } from './block-call-alone';
import { runIndexerRow } from './indexer-row';
import type { TrackedPairs } from '../src/chain/block-quotes';
import { referenceRows } from './reference-rows';

const PAIR_COUNTS = (process.env.BENCH_PAIRS ?? '10,100,500').split(',').map(Number);
const BLOCK_INTERVAL_MS = Number(process.env.BENCH_BLOCK_INTERVAL_MS ?? 750);
const SAMPLES = Number(process.env.BENCH_SAMPLES ?? 30);
const NODE_ROUNDS = Number(process.env.BENCH_NODE_ROUNDS ?? 7);
const CALL_GAS = Number(process.env.BENCH_CALL_GAS ?? 1_000_000_000);
const MAX_ANSWER_BYTES = Number(process.env.BENCH_MAX_ANSWER_BYTES ?? 8 * 1024 * 1024);
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const REFERENCE_PAIRS = Number(process.env.BENCH_REFERENCE_PAIRS ?? 100);

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

async function main(): Promise<void> {
  // The node's default gas for an eth_call (its 30M block gas limit) runs out near 100 pairs: the
  // bench raises both, as an operator sets CALL_GAS (within the node's RPC gas cap).
  // The chain alone: the indexer runs in this process, on the Redis `npm run bench` gives it (REDIS_URL).
  const devnet = await startSystem({
    chains: [8453],
    blockIntervalMs: BLOCK_INTERVAL_MS,
    blockGasLimit: CALL_GAS,
    redisUrl: REDIS_URL,
    services: [],
  });
  const c = devnet.chain(8453);
  const pairsOnChain = await BenchPairs.create(c, Math.max(...PAIR_COUNTS, REFERENCE_PAIRS));

  const redis = new Redis(REDIS_URL);
  const row = {
    redisUrl: REDIS_URL,
    samples: SAMPLES,
    blockIntervalMs: BLOCK_INTERVAL_MS,
    callGas: CALL_GAS,
    maxAnswerBytes: MAX_ANSWER_BYTES,
  };
  // The node alone (block-call-alone.ts) signs its quotes as the indexer does.
  const nodeCtx = {
    chainId: 8453,
    router: c.contracts.router,
    helper: c.contracts.helper,
    verifier: c.contracts.verifier,
    signer: createDigestSigner(c.quoter.privateKey),
  };
  const nodeAlone = (tracked: TrackedPairs) =>
    measureBlockCallAlone({
      wsUrl: c.wsUrl,
      multicall3: c.contracts.multicall3,
      ctx: nodeCtx,
      tracked,
      gas: CALL_GAS,
      rounds: NODE_ROUNDS,
    });
  const rows: string[] = [];
  const stages: string[] = [];
  const nodeRows: string[] = [];
  const skippedRows: string[] = [];
  for (const pairs of PAIR_COUNTS) {
    // List exactly `pairs` base tokens: delist the rest (only WETH stays for 1 pair).
    await pairsOnChain.list(pairs);

    const prefix = `bench-indexer-${pairs}-${Date.now()}`;
    const { events, tracked } = await runIndexerRow(c, { ...row, prefix });
    // Read now: the book expires MAX_HEAD_LAG_MS after its block, before the node alone is measured.
    const book = JSON.parse((await redis.get(redisKeys(prefix).book(8453))) ?? '{"pairs":[]}') as { pairs: unknown[] };
    if (tracked) {
      const alone = await nodeAlone(tracked);
      const mb = (bytes: number) => (bytes / 1e6).toFixed(2);
      // The fastest round is the least disturbed by whatever else the machine runs.
      const callMin = alone.callMs[0]!;
      const sigMin = alone.signaturesMs[0]!;
      const ecrecoverMin = alone.ecrecoverMs[0]!;
      nodeRows.push(
        `${String(pairs).padStart(5)} | ${String(alone.calls).padStart(6)} | ${mb(alone.calldataBytes).padStart(11)} | ${mb(alone.answerBytes).padStart(9)} | ` +
          `${(Number(alone.gasUsed) / 1e6).toFixed(0).padStart(7)} | ${percentile(alone.callMs, 50).toFixed(0).padStart(8)} | ${callMin.toFixed(0).padStart(8)} | ` +
          `${((callMin * 1000) / (alone.calls - 1)).toFixed(0).padStart(15)} | ${sigMin.toFixed(0).padStart(15)} | ${((100 * sigMin) / callMin).toFixed(0).padStart(9)} % | ` +
          `${ecrecoverMin.toFixed(0).padStart(16)} | ${((ecrecoverMin * 1000) / (alone.calls - 1)).toFixed(1).padStart(13)}`,
      );
    }
    const written = events.filter((e) => e.outcome === 'written');
    const latency = written.map((e) => e.latencyMs ?? NaN).sort((a, b) => a - b);
    const sorted = (f: (e: BlockEvent) => number | undefined) => written.map((e) => f(e) ?? NaN).sort((a, b) => a - b);
    const compute = sorted((e) => e.computeMs);
    const call = sorted((e) => e.callMs);
    const p50 = (f: (e: BlockEvent) => number | undefined) => percentile(sorted(f), 50).toFixed(0);
    stages.push(
      `${String(pairs).padStart(5)} | ${p50((e) => e.waitMs).padStart(9)} | ${p50((e) => e.planMs).padStart(9)} | ${p50((e) => e.callMs).padStart(9)} | ${p50((e) => e.writeMs).padStart(10)} | ${`${written.filter((e) => e.plannedAhead).length}/${written.length}`.padStart(13)} | ` +
        `${p50((e) => (e.latencyMs ?? NaN) - (e.callMs ?? NaN)).padStart(14)} | ${percentile(
          sorted((e) => (e.latencyMs ?? NaN) - (e.callMs ?? NaN)),
          99,
        )
          .toFixed(0)
          .padStart(8)}`,
    );
    const calls = [...new Set(written.map((e) => e.ethCalls))].join(',');
    const skipped = events.filter((e) => e.outcome !== 'written').length;
    const outcomes = new Map<string, number>();
    for (const e of events) if (e.outcome !== 'written') outcomes.set(e.outcome, (outcomes.get(e.outcome) ?? 0) + 1);
    if (outcomes.size > 0)
      skippedRows.push(`${pairs} pairs, blocks not written: ${[...outcomes].map(([o, n]) => `${o} ${n}`).join(', ')}`);
    rows.push(
      `${String(pairs).padStart(5)} | ${String(book.pairs.length).padStart(10)} | ${String(written.length).padStart(6)} | ${String(skipped).padStart(7)} | ` +
        `${percentile(latency, 50).toFixed(0).padStart(7)} | ${percentile(latency, 99).toFixed(0).padStart(7)} | ` +
        `${percentile(compute, 50).toFixed(0).padStart(11)} | ${percentile(call, 50).toFixed(0).padStart(16)} | ${percentile(call, 99).toFixed(0).padStart(16)} | ${calls.padStart(13)}`,
    );
    for await (const keys of redis.scanStream({ match: `${prefix}:*`, count: 1000 }) as AsyncIterable<string[]>) {
      if (keys.length > 0) await redis.del(...keys);
    }
  }
  console.log(
    `indexer: block interval ${BLOCK_INTERVAL_MS} ms, default ladder (12 asks + 12 bids per pair), ${SAMPLES} blocks per row, CALL_GAS ${CALL_GAS}, MAX_RPC_ANSWER_BYTES ${MAX_ANSWER_BYTES}`,
  );
  console.log(
    'pairs | book pairs | blocks | skipped |  p50 ms |  p99 ms | compute p50 | eth_call p50 (ms) | eth_call p99 (ms) | eth_calls/blk',
  );
  for (const r of rows) console.log(r);
  for (const r of skippedRows) console.log(r);
  console.log(
    'where the time goes (p50 ms): queue = head seen to job taken; plan = sign + calldata (made ahead when the timestamp was foreseen); write = decode + book to Redis',
  );
  console.log('pairs |     queue |      plan |  eth_call |      write | planned ahead | all but the call | its p99');
  for (const r of stages) console.log(r);
  console.log(
    `the node alone (${NODE_ROUNDS} rounds): the same aggregate3 eth_call at one block, nothing else running; ` +
      'then as many signature checks alone (recoverQuoter: EIP-712 hash + ecrecover); then as many bare ecrecover precompile calls (the floor of any router that checks a signature per quote())',
  );
  console.log(
    'pairs |  calls | calldata MB | answer MB | gas (M) | p50 (ms) | min (ms) | µs/quote (min) | sig checks (min) | sig share | ecrecovers (min) | µs/ecrecover',
  );
  for (const r of nodeRows) console.log(r);
  console.log(`goal: p99 <= ${BLOCK_INTERVAL_MS / 10} ms at 100 pairs, one eth_call per block`);
  if (REFERENCE_PAIRS > 0)
    await referenceRows(
      c,
      pairsOnChain,
      redis,
      { ...row, pairs: REFERENCE_PAIRS },
      async (tracked) => (await nodeAlone(tracked)).callMs[0]!,
    );
  redis.disconnect();
  pairsOnChain.close();
  await devnet.stop();
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
