/**
 * The indexer's last table (indexer.bench.ts): the same pairs with a reference feed each and
 * without, side by side in one run, in alternating rows (a busy phase of the shared machine lands
 * on both sides). With references the block's one eth_call carries two more calls per pair
 * (latestRoundData, decimals) and each pair is held to its band (watch mode: the same work, no
 * pair withheld, so both books carry every pair). Printed per row and per side (medians over its
 * rows of the per-block p50s): the eth_call (the node's time as the indexer sees it), all but the
 * call (the indexer's own: queue hop, plan, decode, band, write) and head to book; and after each
 * row the node alone (block-call-alone.ts: the same call at one block, nothing else running, the
 * fastest of its rounds, far less disturbed by a shared machine). Then what references add per
 * block and the ratios with / without. BENCH_REFERENCE_ROUNDS (default 3) rows a side. Budget
 * (issue 49): the added time at most 10 % of the node's time. A figure, not a test: nothing is
 * asserted.
 */
import type Redis from 'ioredis';
import type { BlockEvent } from '@pmm/indexer';
import type { ChainStack } from '@pmm/devnet';
import type { TrackedPairs } from '../src/chain/block-quotes';
import type { BenchPairs } from './bench-pairs';
import { runIndexerRow, type RowSettings } from './indexer-row';

function p50(values: number[]): number {
  const v = values.filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  return v.length ? (v[(v.length - 1) >> 1]! + v[v.length >> 1]!) / 2 : NaN;
}

export async function referenceRows(
  c: ChainStack,
  pairsOnChain: BenchPairs,
  redis: Redis,
  settings: Omit<RowSettings, 'prefix' | 'references'> & { pairs: number },
  /** The node alone on what a row tracked: the fastest round, ms. */
  nodeAlone: (tracked: TrackedPairs) => Promise<number>,
): Promise<void> {
  await pairsOnChain.list(settings.pairs);
  const references = await pairsOnChain.references(settings.pairs);
  const rounds = Number(process.env.BENCH_REFERENCE_ROUNDS ?? 3);
  type Side = 'with' | 'without';
  type Figures = {
    call: number[];
    own: number[];
    latency: number[];
    alone: number[];
    calls: Set<number>;
    pairs: number[];
  };
  const perSide: Record<Side, Figures> = {
    with: { call: [], own: [], latency: [], alone: [], calls: new Set(), pairs: [] },
    without: { call: [], own: [], latency: [], alone: [], calls: new Set(), pairs: [] },
  };
  const lines: string[] = [];
  for (let round = 0; round < rounds; round++) {
    const order: Side[] = round % 2 === 0 ? ['without', 'with'] : ['with', 'without'];
    for (const side of order) {
      const prefix = `bench-indexer-ref-${side}-${round}-${Date.now()}`;
      const { events, tracked } = await runIndexerRow(c, {
        ...settings,
        prefix,
        ...(side === 'with' ? { references, env: { ...settings.env, REFERENCE_MODE: 'watch' } } : {}),
      });
      const written = events.filter((e: BlockEvent) => e.outcome === 'written');
      const s = perSide[side];
      s.call.push(p50(written.map((e) => e.callMs ?? NaN)));
      s.own.push(p50(written.map((e) => (e.latencyMs ?? NaN) - (e.callMs ?? NaN))));
      s.latency.push(p50(written.map((e) => e.latencyMs ?? NaN)));
      for (const e of written) s.calls.add(e.ethCalls ?? NaN);
      s.pairs.push(tracked?.pairs.filter((p) => p.reference).length ?? 0);
      s.alone.push(tracked ? await nodeAlone(tracked) : NaN);
      lines.push(
        `${`${side} #${round + 1}`.padEnd(10)} | ${s.call.at(-1)!.toFixed(1).padStart(15)} | ${s.own.at(-1)!.toFixed(1).padStart(23)} | ` +
          `${s.latency.at(-1)!.toFixed(1).padStart(19)} | ${s.alone.at(-1)!.toFixed(1).padStart(18)}`,
      );
      for await (const keys of redis.scanStream({ match: `${prefix}:*`, count: 1000 }) as AsyncIterable<string[]>)
        if (keys.length > 0) await redis.del(...keys);
    }
  }
  const med = (xs: number[]) => p50(xs);
  const w = perSide.with;
  const wo = perSide.without;
  console.log(
    `\nreferences at ${settings.pairs} pairs: ${rounds} rows each side, alternating, ${settings.samples} blocks a row; ` +
      `with: ${Math.max(...w.pairs)} pairs with a feed (watch mode), two more calls each in the same eth_call`,
  );
  const head = 'eth_call p50 ms | all but the call p50 ms | head to book p50 ms | node alone min ms';
  console.log(`row        | ${head}`);
  for (const l of lines) console.log(l);
  console.log(`side     | eth_calls/blk | ${head}`);
  for (const [name, s] of [
    ['without', wo],
    ['with', w],
  ] as const)
    console.log(
      `${name.padEnd(8)} | ${[...s.calls].join(',').padStart(13)} | ${med(s.call).toFixed(1).padStart(15)} | ` +
        `${med(s.own).toFixed(1).padStart(23)} | ${med(s.latency).toFixed(1).padStart(19)} | ${med(s.alone).toFixed(1).padStart(18)}`,
    );
  const ratio = (a: number, b: number) => (a / b).toFixed(2);
  const addedAlone = med(w.alone) - med(wo.alone);
  const addedOwn = med(w.own) - med(wo.own);
  console.log(
    `added per block by references (medians, with − without): the node alone ${addedAlone.toFixed(1)} ms ` +
      `(ratio ${ratio(med(w.alone), med(wo.alone))}); the eth_call as the indexer saw it ${(med(w.call) - med(wo.call)).toFixed(1)} ms ` +
      `(ratio ${ratio(med(w.call), med(wo.call))}); the indexer's own ${addedOwn.toFixed(1)} ms (ratio ${ratio(med(w.own), med(wo.own))}); ` +
      `head to book ${(med(w.latency) - med(wo.latency)).toFixed(1)} ms (ratio ${ratio(med(w.latency), med(wo.latency))})`,
  );
  console.log(
    `added time (the node alone's + the indexer's own) as a share of the node's time without references: ` +
      `${((100 * (addedAlone + addedOwn)) / med(wo.alone)).toFixed(1)} % (budget ≤ 10 %)`,
  );
}
