/**
 * The call list of a block, made before the block arrives when its timestamp can be foreseen.
 *
 * A block's calls depend only on the tracked pairs and the block's timestamp (every side's
 * signature covers it, chain/block-quotes.ts), not on its number or hash. Making them (one
 * signature per side, the calldata, the Multicall3 encoding) took about 20 ms of CPU per block
 * at 100 pairs and 100-170 ms at 500 (`npm run bench indexer`), all of it between the head and
 * the eth_call. So once a block's call is sent, the processor asks for the plan of the next
 * computed block's likely timestamp (this one's plus the usual step between computed blocks, at
 * least one second), made while the node works; when that block comes, its plan is ready. The
 * step is between the blocks this replica computes, not between blocks: when a call takes
 * longer than a block interval, the next block computed is the newest, a few blocks on. A plan
 * is kept for the last timestamps too: with blocks faster than a second, several blocks share
 * one timestamp.
 *
 * A guess that misses costs nothing but the CPU spent: the plan is then made on the spot, as
 * without this. A plan is used only for the very tracked pairs it was made for (a registry
 * change makes a new `TrackedPairs`). The signatures made ahead never leave the process: they
 * are inputs of `quote()` in our own eth_call.
 */
import { planBlockCalls, type QuoteContext, type TrackedPairs } from '../chain/block-quotes';
import { encodeAggregate3, type Call } from '../chain/call-codec';

export interface BlockPlan {
  calls: Call[];
  /** The calls as Multicall3 `aggregate3` calldata (when the chain has Multicall3). */
  aggregate3?: string;
}

export interface BlockPlans {
  /** The plan of a block of `timestamp` (s): the one made ahead when there is one, else made now. */
  get(tracked: TrackedPairs, timestamp: number): Promise<{ plan: BlockPlan; ahead: boolean }>;
  /**
   * Once the call of the block `head` is sent: makes, in the background, the plan of the next
   * computed block's likely timestamp. Returns at once; a plan being made is shared with a
   * `get` that needs it.
   */
  prepareNext(tracked: TrackedPairs, head: { number: number; timestamp: number }): void;
}

/** Plans kept: the current timestamp's and the foreseen one's (about 20 MB each at 500 pairs). */
const PLANS_KEPT = 2;

/** Steps between computed blocks remembered; their median is the foreseen one (a pause is one outlier). */
const STEPS_KEPT = 9;

interface Entry {
  tracked: TrackedPairs;
  plan: Promise<BlockPlan>;
}

export function createBlockPlans(opts: {
  ctx: QuoteContext;
  multicall3?: string;
  /** A plan made ahead failed (the block then makes its own, which fails or not on its own). */
  onError?: (err: unknown) => void;
}): BlockPlans {
  const plans = new Map<number, Entry>();
  let last: { number: number; timestamp: number } | undefined;
  /** Seconds between the last blocks computed, oldest first. */
  const steps: number[] = [];
  const usualStep = () => {
    if (steps.length === 0) return 1;
    const sorted = [...steps].sort((a, b) => a - b);
    return Math.max(1, Math.round(sorted[sorted.length >> 1]!));
  };

  const make = async (tracked: TrackedPairs, timestamp: number): Promise<BlockPlan> => {
    const calls = await planBlockCalls(tracked, opts.ctx, BigInt(timestamp) * 1000n);
    return { calls, aggregate3: opts.multicall3 ? encodeAggregate3(calls) : undefined };
  };

  const remember = (tracked: TrackedPairs, timestamp: number, plan: Promise<BlockPlan>) => {
    plans.delete(timestamp);
    plans.set(timestamp, { tracked, plan });
    // A Map iterates in insertion order: the first keys are the oldest.
    for (const key of plans.keys()) if (plans.size > PLANS_KEPT) plans.delete(key);
  };

  return {
    async get(tracked, timestamp) {
      const entry = plans.get(timestamp);
      if (entry && entry.tracked === tracked) {
        try {
          return { plan: await entry.plan, ahead: true };
        } catch {
          // Made ahead and failed: made again below, so that this block's error is its own.
        }
      }
      const plan = make(tracked, timestamp);
      remember(tracked, timestamp, plan);
      return { plan: await plan, ahead: false };
    },

    prepareNext(tracked, head) {
      // A lower or equal number (a reorg, a restarted chain) only restarts the count from here.
      if (last && head.number > last.number) {
        steps.push(head.timestamp - last.timestamp);
        if (steps.length > STEPS_KEPT) steps.shift();
      }
      last = head;
      const next = head.timestamp + usualStep();
      if (plans.get(next)?.tracked === tracked) return;
      // Not now: the caller is about to wait for the node, and this runs meanwhile.
      const plan = new Promise<void>((resolve) => setImmediate(resolve)).then(() => make(tracked, next));
      plan.catch((err: unknown) => {
        if (plans.get(next)?.plan === plan) plans.delete(next);
        opts.onError?.(err);
      });
      remember(tracked, next, plan);
    },
  };
}
