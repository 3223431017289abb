/**
 * The book beside the firm quote, on a running system (testkit's startSystem): for one chain's
 * book (`GET /v2/price`, built by the indexer from on-chain state) at one block, every ladder size
 * it offers on each side of each pair, and sizes between them, the amount the book implies beside
 * the exact amount a sign with that `amountIn` quotes at the same block.
 *
 * - Implied: the SDK's estimateFromBook, which walks the levels best first, rounds against the
 *   taker as the book does and takes the fee off as the router does.
 * - Exact: the `amountOut` of `POST /v2/swap/sign` with `amountIn` (the router's quote() at the
 *   book's block, less the fee). Every sign must name the book's block: a chain that moved during
 *   the sweep fails it rather than compare two states.
 * - Ladder sizes: the indexer's own ladder for the pair (its default: the stack sets no LADDER),
 *   cut where the book stops; each level boundary of the book must be one of its points, so a
 *   ladder rebuilt wrongly here fails loudly. Between them: the midpoint of every ladder step,
 *   and the input at which the router's curve changes tier where that falls inside a step (where
 *   a straight line between two ladder points departs most from the curve).
 *
 * Shared by book-vs-firm.devnet.test.ts (the bounds) and bench/book-bias.bench.ts (the bias in bps).
 */
import type { Hex } from 'viem';
import { estimateFromBook } from '@pmm/client';
import { PmmRouterArtifact, curveOut, curveTiers, type CurveSide, type RouterCurve } from '@pmm/contracts';
import type { ChainStack } from '@pmm/devnet';
import { askLadder, resolveLadder } from '@pmm/indexer';
import {
  summarizeLevels,
  type OrderbookLevel,
  type OrderbookResponse,
  type PairOrderbook,
  type TokenInfo,
} from '@pmm/protocol';
import { chainClients } from '@pmm/testkit';

/** A ladder point the book offers, the midpoint of a ladder step, or a tier boundary of the curve inside a step. */
export type SizeKind = 'ladder' | 'midpoint' | 'tier';

export interface BookBesideSign {
  chainId: number;
  base: TokenInfo;
  quote: TokenInfo;
  /** ask: quote in, base out (the book's asks); bid: base in, quote out. */
  side: CurveSide;
  kind: SizeKind;
  amountIn: bigint;
  /** What the book implies for amountIn, net of the fee (estimateFromBook). */
  implied: bigint;
  /** What a sign with amountIn quotes: its amountOut, net of the fee, at the book's block. */
  exact: bigint;
  /** The ladder step the size lies in, in input units: a ladder point is its step's end; the first step starts at 0. */
  step: { from: bigint; to: bigint };
  /** Levels of that side of the pair's book. */
  levels: number;
}

export interface BookBesideSigns {
  book: OrderbookResponse;
  /** The router's curve of each base token (by address, lowercase) at the book's block. */
  curves: Map<string, RouterCurve>;
  rows: BookBesideSign[];
}

export interface BookBesideSignsOptions {
  gatewayUrl: string;
  apiKey: string;
  chain: ChainStack;
  /** The integrator's fee in 0.1 bps, the same in both. */
  fee: bigint;
}

/** The book's bias against the sign, in bps of the exact amount: negative when the book shows less. */
export function biasBps(row: Pick<BookBesideSign, 'implied' | 'exact'>): number {
  return (Number(row.implied - row.exact) / Number(row.exact)) * 10_000;
}

const same = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();

async function getBook(o: BookBesideSignsOptions): Promise<OrderbookResponse> {
  const res = await fetch(`${o.gatewayUrl}/v2/price?chainId=${o.chain.chainId}`, {
    headers: { 'x-api-key': o.apiKey },
  });
  if (res.status !== 200) throw new Error(`GET /v2/price: ${res.status} ${await res.text()}`);
  return (await res.json()) as OrderbookResponse;
}

async function signAmount(
  o: BookBesideSignsOptions,
  tokenIn: string,
  tokenOut: string,
  amountIn: bigint,
): Promise<{ amountOut: bigint; blockNumber: number }> {
  const res = await fetch(`${o.gatewayUrl}/v2/swap/sign`, {
    method: 'POST',
    headers: { 'x-api-key': o.apiKey, 'content-type': 'application/json' },
    body: JSON.stringify({
      chainId: o.chain.chainId,
      tokenIn,
      tokenOut,
      fee: String(o.fee),
      userAddress: o.chain.testUser.address,
      amountIn: amountIn.toString(),
    }),
  });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`sign ${amountIn} ${tokenIn} → ${tokenOut}: ${res.status} ${text}`);
  const body = JSON.parse(text) as { amountOut: string; blockNumber: number };
  return { amountOut: BigInt(body.amountOut), blockNumber: body.blockNumber };
}

/**
 * The pair's ladder as the indexer makes it by default: asks the default quote notionals; bids the
 * same notionals at the price of its probe, a quote() of the first ask notional (the reference
 * curve's, which is the router's: its own tests compare them), as the indexer measures it.
 */
function indexerLadder(base: TokenInfo, quote: TokenInfo, curve: RouterCurve): Record<CurveSide, bigint[]> {
  const asks = askLadder({}, base, quote);
  const ladder = resolveLadder({}, base, quote, { quoteIn: asks[0]!, baseOut: curveOut(curve, 'ask', asks[0]!) });
  return { ask: ladder.asks, bid: ladder.bids };
}

/**
 * The ladder points one side of the book offers: each level boundary must be a point (asks: the
 * quote the levels cost is the point's within the book's 1e-11 rounding; bids: the base they take
 * is the point), and the last boundary is the last point offered.
 */
function offeredPoints(
  side: CurveSide,
  levels: readonly OrderbookLevel[],
  points: readonly bigint[],
  base: TokenInfo,
  quote: TokenInfo,
): bigint[] {
  let last = -1;
  for (let k = 1; k <= levels.length; k++) {
    const sum = summarizeLevels(levels.slice(0, k), base.decimals, quote.decimals);
    const at = points.findIndex((p) =>
      side === 'bid' ? sum.base === p : sum.quoteCeil >= p && sum.quoteFloor <= p + p / 10n ** 11n + 1n,
    );
    if (at <= last)
      throw new Error(`${base.symbol} ${side}s: levels 1..${k} end on no ladder point after the previous one`);
    last = at;
  }
  return points.slice(0, last + 1);
}

/** The input at which each tier of the curve ends (asks: what the tiers cost in quote; bids: their base depth). */
function tierEnds(curve: RouterCurve, side: CurveSide): bigint[] {
  let cost = 0n;
  return curveTiers(curve, side).map((tier) => {
    if (side === 'bid') return tier.fromBase + tier.capBase;
    cost += (tier.capBase * tier.priceX18 + 10n ** 18n - 1n) / 10n ** 18n;
    return cost;
  });
}

/** The sizes compared on one side: every offered ladder point, every step's midpoint, every tier end inside a step. */
function sizesOf(points: readonly bigint[], tiers: readonly bigint[]) {
  const out: { kind: SizeKind; amountIn: bigint; step: { from: bigint; to: bigint } }[] = [];
  points.forEach((to, i) => {
    const from = i === 0 ? 0n : points[i - 1]!;
    const step = { from, to };
    const mid = (from + to) / 2n;
    if (mid > from) out.push({ kind: 'midpoint', amountIn: mid, step });
    for (const t of tiers) if (t > from && t < to && t !== mid) out.push({ kind: 'tier', amountIn: t, step });
    out.push({ kind: 'ladder', amountIn: to, step });
  });
  return out;
}

/** Compares the chain's book with signs at every size, both sides of every pair; see the file's header. */
export async function bookBesideSigns(o: BookBesideSignsOptions): Promise<BookBesideSigns> {
  const book = await getBook(o);
  const { chain } = o;
  const quote: TokenInfo = chain.quoteToken;
  const publicClient = chainClients(chain).publicClient;
  const curves = new Map<string, RouterCurve>();
  const rows: BookBesideSign[] = [];
  for (const base of chain.baseTokens) {
    const curve = (await publicClient.readContract({
      address: chain.contracts.router as Hex,
      abi: PmmRouterArtifact.abi,
      functionName: 'getCurve',
      args: [base.address as Hex],
      blockNumber: BigInt(book.blockNumber),
    })) as RouterCurve;
    curves.set(base.address.toLowerCase(), curve);
    const pair: PairOrderbook | undefined = book.pairs.find((p) => same(p.baseToken, base.address));
    if (!pair) throw new Error(`chain ${chain.chainId}: no ${base.symbol} pair in the book`);
    const ladder = indexerLadder(base, quote, curve);
    for (const side of ['ask', 'bid'] as const) {
      const levels = side === 'ask' ? pair.asks : pair.bids;
      const [tokenIn, tokenOut] = side === 'ask' ? [quote.address, base.address] : [base.address, quote.address];
      const points = offeredPoints(side, levels, ladder[side], base, quote);
      for (const size of sizesOf(points, tierEnds(curve, side))) {
        const estimate = estimateFromBook({
          pair,
          tokenIn,
          amountIn: size.amountIn,
          baseDecimals: base.decimals,
          quoteDecimals: quote.decimals,
          fee: o.fee,
        });
        if (estimate.unfilledIn !== 0n)
          throw new Error(`${base.symbol} ${side}s: the book does not fill ${size.amountIn}, a size inside it`);
        const signed = await signAmount(o, tokenIn, tokenOut, size.amountIn);
        if (signed.blockNumber !== book.blockNumber)
          throw new Error(
            `chain ${chain.chainId}: a sign named block ${signed.blockNumber}, the book ${book.blockNumber}: the chain moved`,
          );
        rows.push({
          chainId: chain.chainId,
          base,
          quote,
          side,
          ...size,
          implied: estimate.amountOut,
          exact: signed.amountOut,
          levels: levels.length,
        });
      }
    }
  }
  return { book, curves, rows };
}
