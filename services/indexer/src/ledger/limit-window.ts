/**
 * The limits on what executes (and reverts, and goes unused), as arithmetic: one chain's swaps of
 * the rolling window (and the markouts known for them, the reverted calls, the firm signatures
 * judged), per integrator and per pair, and which limits they break. Pure: the ledger feeds it
 * what it commits, what the mid history and the audit trail say (limits.ts), and writes the halts.
 *
 * A scope's swaps are those executed (block time) within the last `windowSeconds` AND after the
 * last resume of that scope: a resume restarts the window, so the swaps that tripped a limit (and
 * those executed while the scope was halted, from signatures given out before) never trip it again.
 *
 * - integrator-notional: the integrator's executed notional (quote units, exact) above the cap;
 * - pair-notional: the pair's (every swap of its base token, unattributed ones too) above the cap;
 * - integrator-markout: the mean markout at the horizon of the integrator's swaps whose horizon has
 *   passed, below the floor, over at least `minSwaps` of them;
 * - integrator-reference-markout: the same against each pair's reference (its swaps of pairs with
 *   one), below its own floor: a curve that stopped moving marks its losses at zero against its
 *   own mid, not against the reference;
 * - integrator-below-quote: the share of its swaps with a firm quote that executed below it (the
 *   settlement's gap < 0, core's quote-gap.ts) above the cap, over at least `minSwaps` of them;
 * - integrator-reverts: the share of its router calls that reverted (its reverted calls over those
 *   and its executed swaps, as the IntegratorSwapsRevert alert counts them) above the trip level,
 *   over at least `minCalls` of them; for a window after an operator's resume of this limit's
 *   trip (its probation), above the lower re-arm level: hysteresis, so that a flow resumed before
 *   it got better halts again at once, and one that did is back to the trip level a window later;
 * - integrator-unused: the share of its firm signatures whose window passed (by deadline) that no
 *   call carried (deadline-fates.ts), over at least `minFirm` of them; the same two levels.
 *
 * Only scopes touched since the last evaluation are evaluated (a new swap, a new markout, or
 * {@link LimitWindow.touch} after a trip that could not be written): sums only fall otherwise.
 */
import type { HaltScope, LedgerEntry, LedgerRevert } from '@pmm/core';
import { formatUnits, parseUnits } from '@pmm/protocol';
import { quoteGapBps } from '@pmm/core';
import type { DeadlineFate } from './deadline-fates';
import type { LimitConfig, MarkoutFloor, ShareLimit } from './limit-settings';
import type { SwapMarkout } from './pending-markouts';

/** What a markout is taken against (the markout limits keep one series each). */
type Basis = 'mid' | 'reference';
const BASES: readonly Basis[] = ['mid', 'reference'];

export const LIMIT_NAMES = [
  'integrator-notional',
  'pair-notional',
  'integrator-markout',
  'integrator-reference-markout',
  'integrator-below-quote',
  'integrator-reverts',
  'integrator-unused',
] as const;
export type LimitName = (typeof LIMIT_NAMES)[number];

/** A limit broken in a scope: what the halt records (`trip`) and says (`reason`). */
export interface Breach {
  limit: LimitName;
  scope: HaltScope;
  /** The measured value and the threshold, decimal strings in the limit's units (quote token or bps). */
  value: string;
  threshold: string;
  reason: string;
}

/** Quote amounts are summed exactly at 18 decimals (no quote token has more). */
const SUM_DECIMALS = 18;

interface Swap {
  id: string;
  blockNumber: number;
  blockTime: number;
  quote: bigint;
  /** `WETH/USDC`: what the reason names. */
  pair: string;
  /** Executed below its firm quote; undefined without one. */
  belowQuote?: boolean;
}

interface Markout {
  id: string;
  blockNumber: number;
  blockTime: number;
  bps: number;
}

/** One of an integrator's router calls: an executed swap or a reverted call. */
interface Call {
  id: string;
  blockNumber: number;
  blockTime: number;
  reverted: boolean;
}

/** One of an integrator's firm signatures once judged: at its block, in the window by its deadline. */
interface Firm {
  id: string;
  blockNumber: number;
  blockTime: number;
  unused: boolean;
}

const idOf = (e: Pick<LedgerEntry, 'txHash' | 'callIndex'>) => `${e.txHash}:${e.callIndex}`;

/** What a scope's limits add up over its swaps (or markouts, or calls): exact, markouts in millionths of a bp. */
interface Sums {
  count: number;
  quote: bigint;
  /** Swaps with a firm quote, and those of them executed below it. */
  quoted: number;
  below: number;
  microBps: bigint;
  /** Calls that reverted (of `count` calls); firm signatures unused (of `count`). */
  reverted: number;
  unused: number;
}
const NONE: Sums = { count: 0, quote: 0n, quoted: 0, below: 0, microBps: 0n, reverted: 0, unused: 0 };
const plus = (a: Sums, b: Sums): Sums => ({
  count: a.count + b.count,
  quote: a.quote + b.quote,
  quoted: a.quoted + b.quoted,
  below: a.below + b.below,
  microBps: a.microBps + b.microBps,
  reverted: a.reverted + b.reverted,
  unused: a.unused + b.unused,
});
const minus = (a: Sums, b: Sums): Sums => ({
  count: a.count - b.count,
  quote: a.quote - b.quote,
  quoted: a.quoted - b.quoted,
  below: a.below - b.below,
  microBps: a.microBps - b.microBps,
  reverted: a.reverted - b.reverted,
  unused: a.unused - b.unused,
});
const swapSums = (s: Swap): Sums => ({
  ...NONE,
  count: 1,
  quote: s.quote,
  quoted: s.belowQuote === undefined ? 0 : 1,
  below: s.belowQuote ? 1 : 0,
});
const markoutSums = (m: Markout): Sums => ({ ...NONE, count: 1, microBps: BigInt(Math.round(m.bps * 1e6)) });
const callSums = (c: Call): Sums => ({ ...NONE, count: 1, reverted: c.reverted ? 1 : 0 });
const firmSums = (f: Firm): Sums => ({ ...NONE, count: 1, unused: f.unused ? 1 : 0 });

/**
 * Swaps or markouts of one scope, in block order, each with the running sums up to it: what a
 * limit needs of a window is the sums of a suffix (the items since the resume; the older ones
 * expire from the front), a difference of two running sums found by binary search. So each block
 * evaluates a scope in O(log n), not by summing its whole window again.
 */
class Series<T extends { id: string; blockNumber: number; blockTime: number }> {
  private readonly entries: { item: T; upTo: Sums }[] = [];
  constructor(private readonly own: (item: T) => Sums) {}

  get size(): number {
    return this.entries.length;
  }
  last(): T | undefined {
    return this.entries[this.entries.length - 1]?.item;
  }
  add(item: T): void {
    const last = this.entries[this.entries.length - 1];
    this.entries.push({ item, upTo: plus(last?.upTo ?? NONE, this.own(item)) });
    // Loaded at a restart after a few blocks already came: put back in block order.
    if (last && last.item.blockNumber > item.blockNumber) {
      this.entries.sort((a, b) => a.item.blockNumber - b.item.blockNumber);
      let upTo = NONE;
      for (const entry of this.entries) entry.upTo = upTo = plus(upTo, this.own(entry.item));
    }
  }
  /** Drops what blocks above `block` held; returns it. */
  rollback(block: number): T[] {
    const gone: T[] = [];
    while (this.entries.length > 0 && this.entries[this.entries.length - 1]!.item.blockNumber > block)
      gone.push(this.entries.pop()!.item);
    return gone;
  }
  /** Drops what executed at or before `cutoff` (the front: block order is time order); returns it. */
  expire(cutoff: number): T[] {
    let n = 0;
    while (n < this.entries.length && this.entries[n]!.item.blockTime <= cutoff) n++;
    return n > 0 ? this.entries.splice(0, n).map((e) => e.item) : [];
  }
  /** The sums of what executed after the resume at `resumedAtMs` (after expire(): all are in the window). */
  since(resumedAtMs: number): Sums {
    // Block times never fall along the chain: the items after the resume are a suffix.
    let lo = 0;
    let hi = this.entries.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.entries[mid]!.item.blockTime * 1000 > resumedAtMs) hi = mid;
      else lo = mid + 1;
    }
    if (lo === this.entries.length) return NONE;
    const first = this.entries[lo]!;
    return minus(this.entries[this.entries.length - 1]!.upTo, minus(first.upTo, this.own(first.item)));
  }
}

type Key = `integrator ${string}` | `pair ${string}`;

export class LimitWindow {
  private readonly swaps = new Map<Key, Series<Swap>>();
  private readonly markouts: Record<Basis, Map<string, Series<Markout>>> = { mid: new Map(), reference: new Map() };
  /** Each integrator's router calls (when the revert limit is set), and its firm signatures judged (the unused limit). */
  private readonly calls = new Map<string, Series<Call>>();
  private readonly firm = new Map<string, Series<Firm>>();
  private readonly ids = new Set<string>();
  private readonly markoutIds: Record<Basis, Set<string>> = { mid: new Set(), reference: new Set() };
  private readonly callIds = new Set<string>();
  private readonly dirty = new Set<Key>();
  private readonly integratorCap?: bigint;
  private readonly pairCap?: bigint;

  constructor(
    private readonly config: LimitConfig,
    private readonly chainId: number,
  ) {
    if (config.integratorNotional) this.integratorCap = parseUnits(config.integratorNotional, SUM_DECIMALS);
    if (config.pairNotional) this.pairCap = parseUnits(config.pairNotional, SUM_DECIMALS);
  }

  /** Committed swaps (a swap already held is ignored: the ledger's own, reloaded at a restart). */
  add(entries: readonly LedgerEntry[]): void {
    for (const e of entries) {
      const id = idOf(e);
      if (this.ids.has(id)) continue;
      this.ids.add(id);
      const gap =
        e.quotedAmountOut === undefined ? undefined : quoteGapBps(BigInt(e.quotedAmountOut), BigInt(e.amountOut));
      const swap: Swap = {
        id,
        blockNumber: e.blockNumber,
        blockTime: e.blockTime,
        quote: parseUnits(e.quoteAmount, SUM_DECIMALS),
        pair: e.pair,
        ...(gap !== undefined ? { belowQuote: gap < 0 } : {}),
      };
      this.series(`pair ${e.base}`).add(swap);
      if (e.integratorId) {
        this.series(`integrator ${e.integratorId}`).add(swap);
        this.addCall(e.integratorId, {
          id: `swap ${id}`,
          blockNumber: e.blockNumber,
          blockTime: e.blockTime,
          reverted: false,
        });
      }
    }
  }

  /** Committed reverted calls (one already held is ignored); only attributed ones count, for their integrator. */
  addReverts(reverts: readonly LedgerRevert[]): void {
    for (const r of reverts)
      if (r.integratorId)
        this.addCall(r.integratorId, {
          id: `revert ${idOf(r)}`,
          blockNumber: r.blockNumber,
          blockTime: r.blockTime,
          reverted: true,
        });
  }

  /** Signatures judged at their deadline (deadline-fates.ts): the firm ones, when the unused limit is set. */
  addFirm(fates: readonly DeadlineFate[]): void {
    if (!this.config.unused) return;
    for (const f of fates) {
      if (!f.firm) continue;
      let series = this.firm.get(f.integratorId);
      if (!series) this.firm.set(f.integratorId, (series = new Series<Firm>(firmSums)));
      series.add({ id: f.requestId, blockNumber: f.blockNumber, blockTime: f.deadline, unused: f.fate === 'unused' });
      this.dirty.add(`integrator ${f.integratorId}`);
    }
  }

  private addCall(integratorId: string, call: Call): void {
    if (!this.config.reverts || this.callIds.has(call.id)) return;
    this.callIds.add(call.id);
    let series = this.calls.get(integratorId);
    if (!series) this.calls.set(integratorId, (series = new Series<Call>(callSums)));
    series.add(call);
    this.dirty.add(`integrator ${integratorId}`);
  }

  /**
   * A swap's markouts at the limits' horizon, once it has passed: against its own mid and against
   * the reference, each when known (ignored for a swap already counted, and for a value that is
   * not a finite number: it counts in no mean).
   */
  addMarkout(e: LedgerEntry, markout: SwapMarkout): void {
    const id = idOf(e);
    if (!e.integratorId) return;
    for (const basis of BASES) {
      const bps = basis === 'mid' ? markout.bps : markout.referenceBps;
      if (bps === undefined || !Number.isFinite(bps) || this.markoutIds[basis].has(id)) continue;
      this.markoutIds[basis].add(id);
      const all = this.markouts[basis];
      let series = all.get(e.integratorId);
      if (!series) all.set(e.integratorId, (series = new Series<Markout>(markoutSums)));
      series.add({ id, blockNumber: e.blockNumber, blockTime: e.blockTime, bps });
      this.dirty.add(`integrator ${e.integratorId}`);
    }
  }

  /** A reorg: what the orphaned blocks above `block` held is forgotten. */
  rollback(block: number): void {
    for (const [key, series] of this.swaps) {
      const gone = series.rollback(block);
      if (gone.length > 0) this.dirty.add(key);
      for (const s of gone) this.ids.delete(s.id);
    }
    for (const basis of BASES)
      for (const series of this.markouts[basis].values())
        for (const m of series.rollback(block)) this.markoutIds[basis].delete(m.id);
    for (const [integrator, series] of this.calls) {
      const gone = series.rollback(block);
      if (gone.length > 0) this.dirty.add(`integrator ${integrator}`);
      for (const c of gone) this.callIds.delete(c.id);
    }
    // Judged again at the next block (deadline-fates.ts).
    for (const series of this.firm.values()) series.rollback(block);
  }

  /** Evaluate `scope` again at the next {@link breaches} (a trip that could not be written). */
  touch(scope: HaltScope): void {
    if (scope.integratorId !== undefined) this.dirty.add(`integrator ${scope.integratorId}`);
    else if (scope.pair !== undefined) this.dirty.add(`pair ${scope.pair}`);
  }

  /**
   * The limits broken at chain time `now` (Unix s) by the scopes touched since the last call.
   * `resumedAt`: the last resume of a scope (Unix ms; -Infinity when never). `liftedTrip`: the
   * last resume of a scope that lifted a trip of `limit` (Unix ms; -Infinity when none): the
   * revert and unused limits' probation starts there.
   */
  breaches(
    now: number,
    resumedAt: (scope: HaltScope) => number,
    liftedTrip: (scope: HaltScope, limit: LimitName) => number = () => -Infinity,
  ): Breach[] {
    const cutoff = now - this.config.windowSeconds;
    this.expire(cutoff);
    const out: Breach[] = [];
    for (const key of this.dirty) {
      const [kind, id] = key.split(' ', 2) as ['integrator' | 'pair', string];
      const scope: HaltScope = kind === 'integrator' ? { integratorId: id } : { chainId: this.chainId, pair: id };
      const since = resumedAt(scope);
      const series = this.swaps.get(key);
      const swaps = series?.since(since) ?? NONE;
      // The quote token's symbol and the pair's name: the same for every swap of the scope's chain and pair.
      const pair = series?.last()?.pair;
      const during = this.during(since, cutoff);
      if (kind === 'pair') {
        const breach = this.notional('pair-notional', this.pairCap, swaps, pair, scope, pair ?? id, during);
        if (breach) out.push(breach);
        continue;
      }
      const notional = this.notional('integrator-notional', this.integratorCap, swaps, pair, scope, id, during);
      if (notional) out.push(notional);
      for (const basis of BASES) {
        const markout = this.markout(basis, id, scope, this.markouts[basis].get(id)?.since(since) ?? NONE, during);
        if (markout) out.push(markout);
      }
      const below = this.belowQuote(id, scope, swaps, during);
      if (below) out.push(below);
      const calls = this.calls.get(id)?.since(since) ?? NONE;
      const reverts = this.share(
        'integrator-reverts',
        this.config.reverts,
        { part: calls.reverted, whole: calls.count, now, liftedAtMs: liftedTrip(scope, 'integrator-reverts') },
        scope,
        (value, above) =>
          `limit integrator-reverts: ${calls.reverted} of ${id}'s ${calls.count} router calls on chain ` +
          `${this.chainId} ${during} reverted (${value} bps), ${above}`,
      );
      if (reverts) out.push(reverts);
      const firm = this.firm.get(id)?.since(since) ?? NONE;
      const unused = this.share(
        'integrator-unused',
        this.config.unused,
        { part: firm.unused, whole: firm.count, now, liftedAtMs: liftedTrip(scope, 'integrator-unused') },
        scope,
        (value, above) =>
          `limit integrator-unused: ${firm.unused} of ${id}'s ${firm.count} firm signatures on chain ` +
          `${this.chainId} whose window passed ${during} were never used (${value} bps), ${above}`,
      );
      if (unused) out.push(unused);
    }
    this.dirty.clear();
    return out;
  }

  private series(key: Key): Series<Swap> {
    let series = this.swaps.get(key);
    if (!series) this.swaps.set(key, (series = new Series<Swap>(swapSums)));
    this.dirty.add(key);
    return series;
  }

  private expire(cutoff: number): void {
    for (const [key, series] of this.swaps) {
      for (const s of series.expire(cutoff)) this.ids.delete(s.id);
      if (series.size === 0) this.swaps.delete(key);
    }
    for (const basis of BASES)
      for (const [integrator, series] of this.markouts[basis]) {
        for (const m of series.expire(cutoff)) this.markoutIds[basis].delete(m.id);
        if (series.size === 0) this.markouts[basis].delete(integrator);
      }
    for (const [integrator, series] of this.calls) {
      for (const c of series.expire(cutoff)) this.callIds.delete(c.id);
      if (series.size === 0) this.calls.delete(integrator);
    }
    for (const [integrator, series] of this.firm) {
      series.expire(cutoff);
      if (series.size === 0) this.firm.delete(integrator);
    }
  }

  /** The window in words: its length, or since the resume that restarted it. */
  private during(resumedAtMs: number, cutoff: number): string {
    return resumedAtMs / 1000 > cutoff
      ? `since its resume at ${new Date(resumedAtMs).toISOString()}`
      : `in the last ${this.config.windowSeconds} s`;
  }

  private notional(
    limit: 'integrator-notional' | 'pair-notional',
    cap: bigint | undefined,
    swaps: Sums,
    pair: string | undefined,
    scope: HaltScope,
    who: string,
    during: string,
  ): Breach | undefined {
    if (cap === undefined || swaps.quote <= cap) return undefined;
    const value = formatUnits(swaps.quote, SUM_DECIMALS);
    const threshold = formatUnits(cap, SUM_DECIMALS);
    const symbol = pair?.split('/')[1];
    return {
      limit,
      scope,
      value,
      threshold,
      reason:
        `limit ${limit}: ${who} executed ${value} ${symbol} on chain ${this.chainId} ${during} ` +
        `(${swaps.count} swaps), above the cap of ${threshold}`,
    };
  }

  private markout(
    basis: Basis,
    integrator: string,
    scope: HaltScope,
    markouts: Sums,
    during: string,
  ): Breach | undefined {
    const limit: MarkoutFloor | undefined = basis === 'mid' ? this.config.markout : this.config.referenceMarkout;
    if (!limit || markouts.count === 0 || markouts.count < limit.minSwaps) return undefined;
    const mean = Number(markouts.microBps) / 1e6 / markouts.count;
    if (!(mean < limit.floorBps)) return undefined;
    const value = mean.toFixed(2);
    const threshold = String(limit.floorBps);
    const name = basis === 'mid' ? 'integrator-markout' : 'integrator-reference-markout';
    const what = basis === 'mid' ? 'markout' : 'markout against the reference';
    return {
      limit: name,
      scope,
      value,
      threshold,
      reason:
        `limit ${name}: ${integrator}'s mean ${limit.horizon} ${what} on chain ${this.chainId} ` +
        `${during} is ${value} bps over ${markouts.count} swaps, below the floor of ${threshold} bps`,
    };
  }

  private belowQuote(integrator: string, scope: HaltScope, swaps: Sums, during: string): Breach | undefined {
    const limit = this.config.belowQuote;
    if (!limit || swaps.quoted === 0 || swaps.quoted < limit.minSwaps) return undefined;
    const shareBps = (swaps.below * 10_000) / swaps.quoted;
    if (!(shareBps > limit.shareBps)) return undefined;
    const value = String(Number(shareBps.toFixed(2)));
    const threshold = String(limit.shareBps);
    return {
      limit: 'integrator-below-quote',
      scope,
      value,
      threshold,
      reason:
        `limit integrator-below-quote: ${swaps.below} of ${integrator}'s ${swaps.quoted} swaps with a firm quote on chain ` +
        `${this.chainId} ${during} executed below it (${value} bps), above the cap of ${threshold} bps`,
    };
  }

  /**
   * A share (`part` of `whole`) above its level: the trip level, or the re-arm level while on
   * probation (a window from the resume that lifted this limit's trip, `liftedAtMs`); over at
   * least the limit's minimum. `reason` words it from the value and the level passed.
   */
  private share(
    limit: 'integrator-reverts' | 'integrator-unused',
    levels: (ShareLimit & { minCalls?: number; minFirm?: number }) | undefined,
    at: { part: number; whole: number; now: number; liftedAtMs: number },
    scope: HaltScope,
    reason: (value: string, above: string) => string,
  ): Breach | undefined {
    const minimum = levels?.minCalls ?? levels?.minFirm ?? 1;
    if (!levels || at.whole === 0 || at.whole < minimum) return undefined;
    const probationEnds = at.liftedAtMs / 1000 + this.config.windowSeconds;
    const probation = at.now < probationEnds;
    const level = probation ? levels.rearmBps : levels.shareBps;
    const shareBps = (at.part * 10_000) / at.whole;
    if (!(shareBps > level)) return undefined;
    const value = String(Number(shareBps.toFixed(2)));
    const threshold = String(level);
    const above = probation
      ? `above the re-arm level of ${threshold} bps (on probation after its last trip, until ${new Date(probationEnds * 1000).toISOString()})`
      : `above the trip level of ${threshold} bps`;
    return { limit, scope, value, threshold, reason: reason(value, above) };
  }
}
