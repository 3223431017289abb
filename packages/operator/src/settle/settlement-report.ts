/**
 * The monthly settlement: the router's swaps (from on-chain facts, scan-swaps.ts) attributed to
 * integrators through the audit trail (the signature in each swap's calldata), then summed per
 * integrator, chain and pair, with the transaction hashes behind every figure.
 *
 * Figures, in the chain's quote token (every pair has it on one side):
 * - volume: the quote leg before the fee. The user paid quote (`tokenIn` = quote): `amountIn`.
 *   The user received quote: `amountOut` plus the fee that was deducted from it.
 * - fees: the fee deducted from the output (`fee` is in 1/100000 of the output). Output in quote:
 *   `amountOut × fee / (100000 − fee)`. Output in the base token: that fee is worth the same share
 *   of the quote paid in, `amountIn × fee / 100000`. Both round down (within one unit of the
 *   router's own rounding).
 *
 * A swap is attributed as attribute-swap.ts says (shared with the maker's ledger); any other swap
 * is listed apart with the reason, also when its signature was asked for by several integrators. Transactions the scan could
 * not examine (no tracer on the node) are listed apart too and counted in the totals.
 *
 * Per integrator, how its firm quotes held (`quotes`, core's quote-gap.ts): of its attributed swaps,
 * those whose audit record carries a quoted `amountOut` for the swap's very amounts, the median
 * gap executed − quoted, the 95th percentile of the shortfall quoted − executed (both in bps of
 * the quote) and the share executed below the quote.
 *
 * Per integrator and chain, two signals (`signals`): signatures that carried more swaps than were
 * asked for (the signature binds no amount, so one can be replayed within its validity), and swaps
 * executed long after signing (block time minus the audit record's signing time). The report is
 * deterministic: the same range and the same trail give the same report (sorted, no generation time).
 *
 * This file computes the report; how it is written is apart: settlement-output.ts (`--format json`
 * and `csv`, the same bytes for the same report) and settlement-metrics.ts (`--metrics`).
 */
import { FEE_DENOMINATOR, formatUnits } from '@pmm/protocol';
import type { TokenMeta } from '../chain/chain-reader';
import { attributeSwap, type SignatureRecords } from '../swaps/attribute-swap';
import type { OnChainSwap, UnexaminedTransaction } from '../swaps/scan-swaps';
import { quoteGapBps } from '@pmm/core';

export interface SignatureLookup extends SignatureRecords {
  /** Unix ms of the oldest record kept on the chain (older ones were trimmed by the retention). */
  oldest(chainId: number): Promise<number | undefined>;
}

export interface ChainScope {
  chainId: number;
  router: string;
  fromBlock: number;
  toBlock: number;
  /** Whether the node had a block at or after the period's end (block-range.ts). */
  ended: boolean;
  /** Lowercase address and metadata of the chain's quote token. */
  quoteToken: string;
  quote: TokenMeta;
}

export interface SettlementInput {
  /** Unix seconds; `to` exclusive. */
  fromSeconds: number;
  toSeconds: number;
  chains: ChainScope[];
  swaps: OnChainSwap[];
  /** Transactions the scan could not examine, with the reason. */
  unexamined: UnexaminedTransaction[];
  /** A swap executed more than this many seconds after its signing is late. */
  lateAfterSeconds: number;
  /** Metadata of every token the swaps touch (prefetched). */
  token(chainId: number, address: string): TokenMeta;
  lookup: SignatureLookup;
}

export interface SwapLine {
  chainId: number;
  blockNumber: number;
  blockTime: string;
  txHash: string;
  /** Order of the swap in its transaction (0 for the first). */
  callIndex: number;
  /** `direct`: the transaction calls the router; `nested`: a contract does (split routes, executors). */
  via: 'direct' | 'nested';
  integratorId: string;
  keyId: string;
  requestId: string;
  signedAt: string;
  /** Seconds from signing to the swap's block ('' when not attributed). */
  delaySeconds: string;
  pair: string;
  side: 'buy' | 'sell' | '';
  /** msg.sender of the router call: the signed userAddress (an executor contract for nested swaps). */
  user: string;
  /** Who sent the transaction. */
  txFrom: string;
  tokenIn: string;
  tokenOut: string;
  amountIn: string;
  amountOut: string;
  fee: string;
  volume: string;
  fees: string;
  reason: string;
  /** The firm quote's amountOut (a /v2 sign with these amounts) and executed − quoted in bps; '' without one. */
  quotedAmountOut: string;
  quoteGapBps: string;
}

/** Per integrator: how its firm quotes held (see the file comment). */
export interface QuoteFidelity {
  integratorId: string;
  /** Attributed swaps, and those with a firm quote for their amounts. */
  swaps: number;
  quoted: number;
  /** Median of executed − quoted, bps of the quote (negative: received less); null without quotes. */
  medianGapBps: number | null;
  /** 95th percentile (nearest rank) of quoted − executed, bps of the quote; null without quotes. */
  p95ShortfallBps: number | null;
  /** Share of the quoted swaps that received less than quoted (0 to 1); null without quotes. */
  belowQuoteShare: number | null;
}

export interface SummaryLine {
  integratorId: string;
  chainId: number;
  pair: string;
  quoteToken: string;
  swaps: number;
  volume: string;
  fees: string;
  /** The distinct transactions behind the figures. */
  transactions: string[];
}

export interface UnexaminedLine {
  chainId: number;
  blockNumber: number;
  blockTime: string;
  txHash: string;
  reason: string;
}

/** One signature that carried several swaps. */
export interface ReusedSignature {
  signature: string;
  /** Swaps executed with it in the period. */
  swaps: number;
  /** Requests recorded for it (identical requests in one second share a signature). */
  requests: number;
  transactions: string[];
}

export interface LateSwap {
  txHash: string;
  callIndex: number;
  signedAt: string;
  blockTime: string;
  delaySeconds: number;
}

/** Per integrator and chain: what to look at beyond the figures. */
export interface IntegratorSignals {
  integratorId: string;
  chainId: number;
  /** Signatures used by more than one swap; `swaps > requests` means reuse beyond what was asked. */
  reusedSignatures: ReusedSignature[];
  /** Swaps with more swaps than requests on their signature: the excess. */
  excessSwaps: number;
  lateSwaps: LateSwap[];
  maxDelaySeconds: number;
}

export interface SettlementTotals {
  /** Swaps found (attributed + listed apart). */
  swaps: number;
  attributed: number;
  listedApart: number;
  /** Transactions that touched the router like a swap but could not be examined (each holds at least one swap). */
  unexaminedTransactions: number;
}

export interface SettlementReport {
  /**
   * False when a transaction that touched the router like a swap could not be examined (listed in
   * `unexamined`), or when a chain's node had no block past the period yet (`periodEnded`): swaps
   * are missing from the figures, so the report must not be taken as the period's.
   */
  complete: boolean;
  period: { from: string; to: string };
  lateAfterSeconds: number;
  chains: {
    chainId: number;
    router: string;
    fromBlock: number;
    toBlock: number;
    /** False: the node had no block at or after the period's end; later blocks may hold more swaps. */
    periodEnded: boolean;
    quoteToken: { address: string; symbol: string; decimals: number };
  }[];
  totals: SettlementTotals;
  summary: SummaryLine[];
  quotes: QuoteFidelity[];
  signals: IntegratorSignals[];
  swaps: SwapLine[];
  unattributed: SwapLine[];
  unexamined: UnexaminedLine[];
}

const iso = (seconds: number) => new Date(seconds * 1000).toISOString();

interface Priced {
  line: SwapLine;
  /** Requests recorded for the swap's signature that agree with it (attributed swaps). */
  requests: number;
  volume: bigint;
  fees: bigint;
  decimals: number;
  quoteSymbol: string;
}

async function price(swap: OnChainSwap, scope: ChainScope, input: SettlementInput): Promise<Priced> {
  const meta = (a: string) => input.token(swap.chainId, a);
  const inMeta = meta(swap.tokenIn);
  const outMeta = meta(swap.tokenOut);
  const quoteIn = swap.tokenIn === scope.quoteToken;
  const quoteOut = swap.tokenOut === scope.quoteToken;
  const base = quoteIn ? outMeta : inMeta;
  const line: SwapLine = {
    chainId: swap.chainId,
    blockNumber: swap.blockNumber,
    blockTime: iso(swap.blockTime),
    txHash: swap.txHash,
    callIndex: swap.callIndex,
    via: swap.via,
    integratorId: '',
    keyId: '',
    requestId: '',
    signedAt: '',
    delaySeconds: '',
    pair: quoteIn || quoteOut ? `${base.symbol}/${scope.quote.symbol}` : `${inMeta.symbol}/${outMeta.symbol}`,
    side: quoteIn ? 'buy' : quoteOut ? 'sell' : '',
    user: swap.user,
    txFrom: swap.txFrom,
    tokenIn: swap.tokenIn,
    tokenOut: swap.tokenOut,
    amountIn: formatUnits(swap.amountIn, inMeta.decimals),
    amountOut: formatUnits(swap.amountOut, outMeta.decimals),
    fee: swap.verification?.fee.toString() ?? '',
    volume: '',
    fees: '',
    reason: '',
    quotedAmountOut: '',
    quoteGapBps: '',
  };
  const priced: Priced = {
    line,
    requests: 0,
    volume: 0n,
    fees: 0n,
    decimals: scope.quote.decimals,
    quoteSymbol: scope.quote.symbol,
  };
  const v = swap.verification;
  if (!v || swap.problem) {
    line.reason = swap.problem ?? 'verificationData: not decodable';
    return priced;
  }
  if (!quoteIn && !quoteOut) {
    line.reason = `neither token is the chain's quote token ${scope.quote.symbol}`;
    return priced;
  }
  if (v.fee >= FEE_DENOMINATOR) {
    line.reason = `fee ${v.fee} is not below ${FEE_DENOMINATOR}`;
    return priced;
  }
  if (quoteIn) {
    priced.volume = swap.amountIn;
    priced.fees = (swap.amountIn * v.fee) / FEE_DENOMINATOR;
  } else {
    priced.fees = (swap.amountOut * v.fee) / (FEE_DENOMINATOR - v.fee);
    priced.volume = swap.amountOut + priced.fees;
  }
  line.volume = formatUnits(priced.volume, scope.quote.decimals);
  line.fees = formatUnits(priced.fees, scope.quote.decimals);
  const attribution = await attributeSwap(swap, input.lookup);
  if ('reason' in attribution) line.reason = attribution.reason;
  else {
    const r = attribution.entry.record;
    line.integratorId = r.integratorId;
    line.keyId = r.keyId;
    line.requestId = r.requestId;
    line.signedAt = new Date(r.time).toISOString();
    // Whole seconds, rounded down: block times are whole seconds.
    line.delaySeconds = String(Math.floor((swap.blockTime * 1000 - r.time) / 1000));
    priced.requests = attribution.requests;
    const quoted = attribution.quotedAmountOut;
    const gap = quoted === undefined ? undefined : quoteGapBps(BigInt(quoted), swap.amountOut);
    if (quoted !== undefined && gap !== undefined) {
      line.quotedAmountOut = formatUnits(BigInt(quoted), outMeta.decimals);
      line.quoteGapBps = String(gap);
    }
  }
  return priced;
}

export async function buildSettlement(input: SettlementInput): Promise<SettlementReport> {
  const scopes = new Map(input.chains.map((c) => [c.chainId, c]));
  const groups = new Map<string, { s: SummaryLine; volume: bigint; fees: bigint; decimals: number }>();
  const swaps: SwapLine[] = [];
  const unattributed: SwapLine[] = [];
  // signature key → the attributed swaps that used it
  const bySignature = new Map<string, { line: SwapLine; requests: number }[]>();
  const ordered = [...input.swaps].sort(
    (a, b) =>
      a.chainId - b.chainId || a.blockNumber - b.blockNumber || a.logIndex - b.logIndex || a.callIndex - b.callIndex,
  );
  for (const swap of ordered) {
    const scope = scopes.get(swap.chainId);
    if (!scope) throw new Error(`swap on chain ${swap.chainId} outside the scanned chains`);
    const p = await price(swap, scope, input);
    if (p.line.reason) {
      unattributed.push(p.line);
      continue;
    }
    swaps.push(p.line);
    const sigKey = `${p.line.integratorId}\u0000${swap.chainId}\u0000${swap.verification!.signature}`;
    bySignature.set(sigKey, [...(bySignature.get(sigKey) ?? []), { line: p.line, requests: p.requests }]);
    const key = `${p.line.integratorId}\u0000${swap.chainId}\u0000${p.line.pair}`;
    let g = groups.get(key);
    if (!g) {
      g = {
        s: {
          integratorId: p.line.integratorId,
          chainId: swap.chainId,
          pair: p.line.pair,
          quoteToken: p.quoteSymbol,
          swaps: 0,
          volume: '',
          fees: '',
          transactions: [],
        },
        volume: 0n,
        fees: 0n,
        decimals: p.decimals,
      };
      groups.set(key, g);
    }
    g.s.swaps += 1;
    // A transaction with several swaps (a split route) is listed once; swaps are in block order.
    if (g.s.transactions[g.s.transactions.length - 1] !== swap.txHash) g.s.transactions.push(swap.txHash);
    g.volume += p.volume;
    g.fees += p.fees;
  }
  const summary = [...groups.values()]
    .map((g) => ({ ...g.s, volume: formatUnits(g.volume, g.decimals), fees: formatUnits(g.fees, g.decimals) }))
    .sort((a, b) =>
      a.integratorId < b.integratorId
        ? -1
        : a.integratorId > b.integratorId
          ? 1
          : a.chainId - b.chainId || (a.pair < b.pair ? -1 : a.pair > b.pair ? 1 : 0),
    );
  const byIntegrator = (a: SwapLine, b: SwapLine) =>
    a.integratorId < b.integratorId ? -1 : a.integratorId > b.integratorId ? 1 : 0;
  const unexamined = [...input.unexamined]
    .sort((a, b) => a.chainId - b.chainId || a.blockNumber - b.blockNumber || a.logIndex - b.logIndex)
    .map((u) => ({
      chainId: u.chainId,
      blockNumber: u.blockNumber,
      blockTime: iso(u.blockTime),
      txHash: u.txHash,
      reason: u.reason,
    }));
  return {
    complete: unexamined.length === 0 && input.chains.every((c) => c.ended),
    period: { from: iso(input.fromSeconds), to: iso(input.toSeconds) },
    lateAfterSeconds: input.lateAfterSeconds,
    chains: [...input.chains]
      .sort((a, b) => a.chainId - b.chainId)
      .map((c) => ({
        chainId: c.chainId,
        router: c.router.toLowerCase(),
        fromBlock: c.fromBlock,
        toBlock: c.toBlock,
        periodEnded: c.ended,
        quoteToken: { address: c.quoteToken, symbol: c.quote.symbol, decimals: c.quote.decimals },
      })),
    totals: {
      swaps: swaps.length + unattributed.length,
      attributed: swaps.length,
      listedApart: unattributed.length,
      unexaminedTransactions: unexamined.length,
    },
    summary,
    quotes: quotesOf(swaps),
    signals: signalsOf(swaps, bySignature, input.lateAfterSeconds),
    // Stable sort: within an integrator, chain then block order from above.
    swaps: swaps.sort(byIntegrator),
    unattributed,
    unexamined,
  };
}

/** The nearest-rank `p` percentile (0 < p ≤ 1) of sorted values. */
function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.max(0, Math.ceil(p * sorted.length) - 1)]!;
}

/** How each integrator's firm quotes held (integrators with attributed swaps, sorted by id). */
function quotesOf(swaps: readonly SwapLine[]): QuoteFidelity[] {
  const by = new Map<string, { swaps: number; gaps: number[] }>();
  for (const l of swaps) {
    const g = by.get(l.integratorId) ?? { swaps: 0, gaps: [] };
    g.swaps += 1;
    if (l.quoteGapBps !== '') g.gaps.push(Number(l.quoteGapBps));
    by.set(l.integratorId, g);
  }
  return [...by.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([integratorId, { swaps: n, gaps }]) => {
      const sorted = [...gaps].sort((a, b) => a - b);
      const shortfalls = sorted.map((g) => -g).sort((a, b) => a - b);
      const some = sorted.length > 0;
      return {
        integratorId,
        swaps: n,
        quoted: sorted.length,
        medianGapBps: some ? percentile(sorted, 0.5) : null,
        p95ShortfallBps: some ? percentile(shortfalls, 0.95) : null,
        belowQuoteShare: some ? sorted.filter((g) => g < 0).length / sorted.length : null,
      };
    });
}

/** Reused signatures and late swaps per integrator and chain (only pairs with something to show). */
function signalsOf(
  swaps: readonly SwapLine[],
  bySignature: ReadonlyMap<string, { line: SwapLine; requests: number }[]>,
  lateAfterSeconds: number,
): IntegratorSignals[] {
  const out = new Map<string, IntegratorSignals>();
  const of = (l: SwapLine) => {
    const key = `${l.integratorId}\u0000${l.chainId}`;
    let s = out.get(key);
    if (!s) {
      s = {
        integratorId: l.integratorId,
        chainId: l.chainId,
        reusedSignatures: [],
        excessSwaps: 0,
        lateSwaps: [],
        maxDelaySeconds: 0,
      };
      out.set(key, s);
    }
    return s;
  };
  for (const [key, used] of bySignature) {
    if (used.length < 2) continue;
    const s = of(used[0]!.line);
    const requests = Math.max(...used.map((u) => u.requests));
    s.reusedSignatures.push({
      signature: key.split('\u0000')[2]!,
      swaps: used.length,
      requests,
      transactions: [...new Set(used.map((u) => u.line.txHash))],
    });
    s.excessSwaps += Math.max(0, used.length - requests);
  }
  for (const l of swaps) {
    const delay = Number(l.delaySeconds);
    const s = of(l);
    s.maxDelaySeconds = Math.max(s.maxDelaySeconds, delay);
    if (delay > lateAfterSeconds)
      s.lateSwaps.push({
        txHash: l.txHash,
        callIndex: l.callIndex,
        signedAt: l.signedAt,
        blockTime: l.blockTime,
        delaySeconds: delay,
      });
  }
  for (const s of out.values()) s.reusedSignatures.sort((a, b) => (a.signature < b.signature ? -1 : 1));
  return [...out.values()].sort((a, b) =>
    a.integratorId < b.integratorId ? -1 : a.integratorId > b.integratorId ? 1 : a.chainId - b.chainId,
  );
}
