/**
 * The figures aggregators rank a maker on, per integrator, chain and pair, from the signatures'
 * fates (signature-fates.ts): fill rate (firm signatures executed / firm signatures), revert rate
 * (reverted / attempted: executed or reverted), by reason, unused share, and the delay from
 * signing to execution (median and p95, in seconds and, for firm quotes, blocks). Only final
 * fates count; pending ones are counted apart. Every count adds up: executed + reverted + unused
 * = signatures.
 */
import type { SignatureFate } from './signature-fates';

export interface Spread {
  median: number;
  p95: number;
}

export interface FillFigures {
  integratorId: string;
  chainId: number;
  pair: string;
  /** Final fates. */
  signatures: number;
  executed: number;
  reverted: number;
  unused: number;
  /** Not final yet (window open in the ledger's time, or no deadline recorded). */
  pending: number;
  firm: number;
  firmExecuted: number;
  /** firmExecuted / firm; null without firm signatures. */
  fillRate: number | null;
  /** executed + reverted. */
  attempted: number;
  /** reverted / attempted; null without attempts. */
  revertRate: number | null;
  /** Reverted signatures by the router's error (the last revert's). */
  revertsByReason: Record<string, number>;
  /** unused / signatures; null without final signatures. */
  unusedShare: number | null;
  delaySeconds: Spread | null;
  delayBlocks: Spread | null;
}

/** Median and nearest-rank 95th percentile; null for none. */
export function spreadOf(values: readonly number[]): Spread | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const n = sorted.length;
  const median = n % 2 ? sorted[(n - 1) / 2]! : (sorted[n / 2 - 1]! + sorted[n / 2]!) / 2;
  return { median, p95: sorted[Math.ceil(0.95 * n) - 1]! };
}

const ratio = (part: number, whole: number) => (whole === 0 ? null : part / whole);

/** One row per integrator, chain and pair, sorted by them. */
export function fillFigures(fates: readonly SignatureFate[]): FillFigures[] {
  const groups = new Map<string, SignatureFate[]>();
  for (const f of fates) {
    const key = JSON.stringify([f.integratorId, f.chainId, f.pair]);
    groups.set(key, [...(groups.get(key) ?? []), f]);
  }
  const rows = [...groups.values()].map((list): FillFigures => {
    const final = list.filter((f) => f.fate !== 'pending');
    const count = (fate: SignatureFate['fate']) => final.filter((f) => f.fate === fate).length;
    const executed = final.filter((f) => f.fate === 'executed');
    const reverted = count('reverted');
    const firm = final.filter((f) => f.firm);
    const revertsByReason: Record<string, number> = {};
    for (const f of final)
      if (f.fate === 'reverted') revertsByReason[f.reason!] = (revertsByReason[f.reason!] ?? 0) + 1;
    return {
      integratorId: list[0]!.integratorId,
      chainId: list[0]!.chainId,
      pair: list[0]!.pair,
      signatures: final.length,
      executed: executed.length,
      reverted,
      unused: count('unused'),
      pending: list.length - final.length,
      firm: firm.length,
      firmExecuted: firm.filter((f) => f.fate === 'executed').length,
      fillRate: ratio(firm.filter((f) => f.fate === 'executed').length, firm.length),
      attempted: executed.length + reverted,
      revertRate: ratio(reverted, executed.length + reverted),
      revertsByReason,
      unusedShare: ratio(count('unused'), final.length),
      delaySeconds: spreadOf(executed.map((f) => f.delaySeconds!)),
      delayBlocks: spreadOf(executed.flatMap((f) => (f.delayBlocks === undefined ? [] : [f.delayBlocks]))),
    };
  });
  return rows.sort(
    (a, b) => a.integratorId.localeCompare(b.integratorId) || a.chainId - b.chainId || a.pair.localeCompare(b.pair),
  );
}
