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
 * A swap is attributed only by an audit record of its signature that agrees with its calldata
 * (records that also asked for the calldata's amounts first: the signature does not cover the
 * amounts, so one signature can carry several requests); any other swap is listed apart with the
 * reason, also when its signature was asked for by several integrators. Output is deterministic: the same range and the
 * same trail give the same bytes (sorted, no generation time).
 */
import { FEE_DENOMINATOR, formatUnits } from '@pmm/protocol';
import type { TokenMeta } from '../chain/chain-reader';
import { csvLine } from '../csv';
import type { AuditEntry } from '../store/audit-reader';
import type { OnChainSwap } from './scan-swaps';

export interface SignatureLookup {
  bySignature(chainId: number, signature: string, timestamp: number): Promise<AuditEntry[]>;
  /** Unix ms of the oldest record kept on the chain (older ones were trimmed by the retention). */
  oldest(chainId: number): Promise<number | undefined>;
}

export interface ChainScope {
  chainId: number;
  router: string;
  fromBlock: number;
  toBlock: number;
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
  /** Metadata of every token the swaps touch (prefetched). */
  token(chainId: number, address: string): TokenMeta;
  lookup: SignatureLookup;
}

export interface SwapLine {
  chainId: number;
  blockNumber: number;
  blockTime: string;
  txHash: string;
  integratorId: string;
  keyId: string;
  requestId: string;
  signedAt: string;
  pair: string;
  side: 'buy' | 'sell' | '';
  user: string;
  tokenIn: string;
  tokenOut: string;
  amountIn: string;
  amountOut: string;
  fee: string;
  volume: string;
  fees: string;
  reason: string;
}

export interface SummaryLine {
  integratorId: string;
  chainId: number;
  pair: string;
  quoteToken: string;
  swaps: number;
  volume: string;
  fees: string;
  transactions: string[];
}

export interface SettlementReport {
  period: { from: string; to: string };
  chains: {
    chainId: number;
    router: string;
    fromBlock: number;
    toBlock: number;
    quoteToken: { address: string; symbol: string; decimals: number };
  }[];
  summary: SummaryLine[];
  swaps: SwapLine[];
  unattributed: SwapLine[];
}

const iso = (seconds: number) => new Date(seconds * 1000).toISOString();

interface Priced {
  line: SwapLine;
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
    integratorId: '',
    keyId: '',
    requestId: '',
    signedAt: '',
    pair: quoteIn || quoteOut ? `${base.symbol}/${scope.quote.symbol}` : `${inMeta.symbol}/${outMeta.symbol}`,
    side: quoteIn ? 'buy' : quoteOut ? 'sell' : '',
    user: swap.sender,
    tokenIn: swap.tokenIn,
    tokenOut: swap.tokenOut,
    amountIn: formatUnits(swap.amountIn, inMeta.decimals),
    amountOut: formatUnits(swap.amountOut, outMeta.decimals),
    fee: swap.verification?.fee.toString() ?? '',
    volume: '',
    fees: '',
    reason: '',
  };
  const priced: Priced = {
    line,
    volume: 0n,
    fees: 0n,
    decimals: scope.quote.decimals,
    quoteSymbol: scope.quote.symbol,
  };
  const v = swap.verification;
  if (!v) {
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
  const records = await input.lookup.bySignature(swap.chainId, v.signature, swap.quoteTimestamp);
  // The signature binds these fields; a record that disagrees was not for this swap.
  const matching = records.filter(
    (e) =>
      e.record.userAddress === v.userAddress &&
      e.record.fee === v.fee.toString() &&
      e.record.originRate === v.originRate.toString() &&
      e.record.tokenIn === swap.tokenIn &&
      e.record.tokenOut === swap.tokenOut &&
      e.record.timestamp === swap.quoteTimestamp,
  );
  // The signature does not cover the amounts, so several requests (even of several integrators)
  // can share one: those that asked for this swap's exact amounts tell who sent it.
  const sameAmounts = matching.filter(
    (e) =>
      e.record.amountIn === swap.callAmountIn.toString() && e.record.minAmountOut === swap.callMinAmountOut.toString(),
  );
  const candidates = sameAmounts.length > 0 ? sameAmounts : matching;
  const integrators = [...new Set(candidates.map((e) => e.record.integratorId))].sort();
  if (matching.length === 0) {
    line.reason =
      records.length === 0
        ? 'no audit record of its signature'
        : 'the audit record of its signature does not match the swap';
  } else if (integrators.length > 1) {
    line.reason = `signature recorded for several integrators: ${integrators.join(', ')}`;
  } else {
    const r = candidates[0]!.record;
    line.integratorId = r.integratorId;
    line.keyId = r.keyId;
    line.requestId = r.requestId;
    line.signedAt = new Date(r.time).toISOString();
  }
  return priced;
}

export async function buildSettlement(input: SettlementInput): Promise<SettlementReport> {
  const scopes = new Map(input.chains.map((c) => [c.chainId, c]));
  const groups = new Map<string, { s: SummaryLine; volume: bigint; fees: bigint; decimals: number }>();
  const swaps: SwapLine[] = [];
  const unattributed: SwapLine[] = [];
  const ordered = [...input.swaps].sort(
    (a, b) => a.chainId - b.chainId || a.blockNumber - b.blockNumber || a.logIndex - b.logIndex,
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
    g.s.transactions.push(swap.txHash);
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
  return {
    period: { from: iso(input.fromSeconds), to: iso(input.toSeconds) },
    chains: [...input.chains]
      .sort((a, b) => a.chainId - b.chainId)
      .map((c) => ({
        chainId: c.chainId,
        router: c.router.toLowerCase(),
        fromBlock: c.fromBlock,
        toBlock: c.toBlock,
        quoteToken: { address: c.quoteToken, symbol: c.quote.symbol, decimals: c.quote.decimals },
      })),
    summary,
    // Stable sort: within an integrator, chain then block order from above.
    swaps: swaps.sort(byIntegrator),
    unattributed,
  };
}

export function settlementJson(report: SettlementReport): string {
  return `${JSON.stringify(report, null, 2)}\n`;
}

const SUMMARY_COLUMNS = ['integratorId', 'chainId', 'pair', 'quoteToken', 'swaps', 'volume', 'fees', 'transactions'];

/** One row per integrator, chain and pair; the transaction hashes space-separated in the last column. */
export function settlementCsv(report: SettlementReport): string {
  const rows = report.summary.map((s) =>
    csvLine([s.integratorId, s.chainId, s.pair, s.quoteToken, s.swaps, s.volume, s.fees, s.transactions.join(' ')]),
  );
  return [csvLine(SUMMARY_COLUMNS), ...rows].join('\n') + '\n';
}

const SWAP_COLUMNS: (keyof SwapLine)[] = [
  'integratorId',
  'chainId',
  'blockNumber',
  'blockTime',
  'txHash',
  'pair',
  'side',
  'user',
  'tokenIn',
  'tokenOut',
  'amountIn',
  'amountOut',
  'fee',
  'volume',
  'fees',
  'keyId',
  'requestId',
  'signedAt',
  'reason',
];

/** One row per swap, attributed first, then those listed apart (empty integratorId, with a reason). */
export function settlementSwapsCsv(report: SettlementReport): string {
  const rows = [...report.swaps, ...report.unattributed].map((l) => csvLine(SWAP_COLUMNS.map((c) => l[c])));
  return [csvLine(SWAP_COLUMNS), ...rows].join('\n') + '\n';
}
