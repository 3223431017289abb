/**
 * The gap between what a firm quote promised (`amountOut` of the sign answer, kept in the audit
 * record) and what the router paid when the swap executed, in basis points of the quote:
 * negative when the swap received less. Aggregators rank makers on it; `audit tx` shows it per
 * swap and `settle` per integrator.
 */

/** (executed − quoted) / quoted in bps, to 0.01 bps (rounded toward zero); undefined for a zero quote. */
export function quoteGapBps(quoted: bigint, executed: bigint): number | undefined {
  if (quoted === 0n) return undefined;
  return Number(((executed - quoted) * 1_000_000n) / quoted) / 100;
}
