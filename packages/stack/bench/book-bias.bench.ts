/**
 * `npm run bench book-bias`: how far what the book shows is from what a sign quotes, per chain and
 * side, in bps of the sign's amountOut (docs/decisions/0029-the-book-beside-the-firm-quote.md).
 *
 * The system as `npm start` runs it (testkit's startSystem: the three devnet chains, one indexer
 * each building `/v2/price` from on-chain state with its default ladder, the signer, the gateway)
 * on a still market, each chain mining only on a transaction and none sent, the indexers keeping
 * the book of its last block. For every pair, both sides, every ladder size the book offers and
 * the sizes between them (each step's midpoint and each tier boundary of the router's curve inside
 * a step), the amount the book implies (the SDK's estimateFromBook, fee 30) beside the `amountOut`
 * of a sign with that `amountIn` at the book's block (test/support/book-beside-signs.ts, which
 * book-vs-firm.devnet.test.ts holds to its bounds). Bias = (book − sign) / sign, in bps: negative
 * when the book shows less than the sign pays.
 *
 * Not a speed figure: the amounts are the chain's and do not depend on the machine's load. The
 * services use a private Redis (startSystem's), not `npm run bench`'s: nothing here is timed.
 */
import { startSystem, until, type System } from '@pmm/testkit';
import { biasBps, bookBesideSigns, type BookBesideSign } from '../test/support/book-beside-signs';

const CHAINS = [8453, 56, 4663] as const;
const FEE = 30n;
const STILL_MS = '1800000';

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** The value farthest from 0 (the book's worst disagreement, either way). */
const worst = (values: readonly number[]) => values.reduce((w, v) => (Math.abs(v) > Math.abs(w) ? v : w), 0);

/** Bps as read: two decimals, or the order of magnitude of what rounds to 0.00. */
function bps(v: number): string {
  if (v === 0) return '0';
  return Math.abs(v) < 0.005 ? v.toExponential(1) : v.toFixed(2);
}

const col = (s: string, width: number) => s.padStart(width);

let system: System | undefined;

async function main(): Promise<void> {
  const sys = (system = await startSystem({
    chains: [...CHAINS],
    blockIntervalMs: 0,
    env: {
      indexer: { MAX_HEAD_LAG_MS: STILL_MS, BOOK_TTL_MS: STILL_MS },
      signer: { FIRM_QUOTE_DEADLINE_MS: '3000', MAX_SIGN_DEADLINE_MS: '3000' },
      gateway: { SIGN_DEADLINE_MS: '3000' },
    },
  }));
  const rows: BookBesideSign[] = [];
  for (const chainId of CHAINS) {
    await until(
      async () =>
        (
          await fetch(`${sys.gateway.url}/v2/price?chainId=${chainId}`, {
            headers: { 'x-api-key': sys.gateway.apiKey },
          })
        ).status === 200,
      60_000,
      `chain ${chainId}: a book`,
      100,
    );
    const swept = await bookBesideSigns({
      gatewayUrl: sys.gateway.url,
      apiKey: sys.gateway.apiKey,
      chain: sys.chain(chainId),
      fee: FEE,
    });
    rows.push(...swept.rows);
  }
  await sys.stop();
  system = undefined;

  console.log(
    "\nbias of the book against a sign with amountIn, bps of the sign's amountOut (negative: the book shows less);\n" +
      'every pair of the chain; "between": each ladder step\'s midpoint and each tier boundary of the curve inside a step',
  );
  console.log(
    'chain'.padEnd(6),
    'side'.padEnd(5),
    col('points', 7),
    col('median', 9),
    col('worst', 9),
    col('between', 8),
    col('median', 9),
    col('worst', 9),
  );
  for (const chainId of CHAINS)
    for (const side of ['ask', 'bid'] as const) {
      const mine = rows.filter((r) => r.chainId === chainId && r.side === side);
      const atPoints = mine.filter((r) => r.kind === 'ladder').map(biasBps);
      const between = mine.filter((r) => r.kind !== 'ladder').map(biasBps);
      console.log(
        String(chainId).padEnd(6),
        side.padEnd(5),
        col(String(atPoints.length), 7),
        col(bps(median(atPoints)), 9),
        col(bps(worst(atPoints)), 9),
        col(String(between.length), 8),
        col(bps(median(between)), 9),
        col(bps(worst(between)), 9),
      );
    }
  const over = rows.filter((r) => r.implied > r.exact);
  console.log(`\nsizes where the book shows more than the sign pays: ${over.length} of ${rows.length}`);
}

main().catch(async (err: unknown) => {
  console.error(err);
  await system?.stop();
  process.exit(1);
});
