/**
 * The operator's `settle` command (the logic behind settle.ts): the fee settlement of a
 * period from on-chain facts (swaps/scan-swaps.ts), attributed through the audit trail
 * (swaps/attribute-swap.ts) and summed (settlement-report.ts), then written (settlement-output.ts,
 * settlement-metrics.ts).
 */
import { writeFileSync } from 'node:fs';
import { replaceFile } from '@pmm/core';
import { TRACER_KINDS, TracerChoice, type TracerKind } from '../chain/call-trace';
import type { ChainReader, TokenMeta } from '../chain/chain-reader';
import { blockRangeForTime } from './block-range';
import { scanSwaps, type OnChainSwap, type UnexaminedTransaction } from '../swaps/scan-swaps';
import { buildSettlement, type ChainScope, type SignatureLookup } from './settlement-report';
import { settlementMetrics } from './settlement-metrics';
import {
  settlementCsv,
  settlementJson,
  settlementSwapsCsv,
  NOT_ENDED_ROW,
  NOT_EXAMINED_ROW,
} from './settlement-output';
import { UsageError, chainList, monthArg, parseOptions, timeArg } from '../cli/cli-options';
import { reportErrors } from '../cli/run-operator-command';

export const SETTLE_USAGE = `usage: settle (--month YYYY-MM | --from <time> --to <time>) [options]

  --chain <id,id>|all   chains to settle (default: every chain in CHAINS)
  --format json|csv     json (default): summary, every swap, and the swaps listed apart;
                        csv: one row per integrator, chain and pair with its transaction hashes
  --detail              with csv: one row per swap instead (unattributed ones last, with a reason)
  --out <file>          write the report there instead of standard output
  --span <blocks>       most blocks per eth_getLogs request (default 2000)
  --tracer auto|callTracer|parity|structLogs|none
                        how transactions that call the router from a contract are traced
                        (default auto: the first the node accepts); none lists them apart
  --concurrency <n>     transactions read or traced at once (default 8)
  --late-after <s>      a swap executed more than this many seconds after signing is late (default 60)
  --metrics <file>      also write the alerting figures there (Prometheus text format, for a
                        textfile collector): swaps, unexamined transactions, reused signatures, late swaps
  --quiet               no progress on standard error

Times are YYYY-MM-DD or ISO 8601, UTC unless a zone is given; --to is exclusive. Only swaps in
blocks of the period count; the same period gives the same bytes once it has ended.
Transactions that could not be examined are listed apart (\`unexamined\`) and counted on standard error;
the report is then incomplete (\`complete: false\`; csv: a "${NOT_EXAMINED_ROW}" row) and the exit code 3.
So it is when a chain's node has no block at or after --to yet (\`periodEnded: false\`; csv: "${NOT_ENDED_ROW}").
Exit codes: 0 done, 1 error, 2 usage, 3 done but incomplete.`;

/** The report is written but incomplete: transactions not examined, or a period not over on a node. */
export const SETTLE_INCOMPLETE = 3;

export interface SettleCommandDeps {
  lookup: SignatureLookup;
  /** Chains configured in CHAINS. */
  chains: readonly number[];
  /** The chain's reader and contract addresses; throws when not configured. */
  chain(chainId: number): { reader: ChainReader; router: string; helper: string };
  out(text: string): void;
  err(line: string): void;
}

export function runSettleCommand(argv: readonly string[], deps: SettleCommandDeps): Promise<number> {
  return reportErrors('settle', SETTLE_USAGE, deps, () => settle(argv, deps));
}

async function settle(argv: readonly string[], deps: SettleCommandDeps): Promise<number> {
  const { values, flags, positionals } = parseOptions(
    argv,
    ['month', 'from', 'to', 'chain', 'format', 'out', 'span', 'tracer', 'concurrency', 'late-after', 'metrics'],
    ['detail', 'quiet'],
  );
  if (positionals.length > 0) throw new UsageError(`unexpected argument "${positionals[0]}"`);
  let fromMs: number;
  let toMs: number;
  if (values.month !== undefined) {
    if (values.from !== undefined || values.to !== undefined) throw new UsageError('--month or --from/--to, not both');
    [fromMs, toMs] = monthArg(values.month);
  } else {
    const from = timeArg('from', values.from);
    const to = timeArg('to', values.to);
    if (from === undefined || to === undefined) throw new UsageError('--month, or both --from and --to, are required');
    [fromMs, toMs] = [from, to];
  }
  if (toMs <= fromMs) throw new UsageError('--to must be after --from');
  const format = values.format ?? 'json';
  if (format !== 'json' && format !== 'csv') throw new UsageError('--format must be json or csv');
  if (flags.has('detail') && format !== 'csv') throw new UsageError('--detail is for --format csv');
  const span = values.span === undefined ? 2_000 : Number(values.span);
  if (!Number.isSafeInteger(span) || span < 1 || span > 1_000_000) throw new UsageError('--span must be 1..1000000');
  const concurrency = values.concurrency === undefined ? 8 : Number(values.concurrency);
  if (!Number.isSafeInteger(concurrency) || concurrency < 1 || concurrency > 256)
    throw new UsageError('--concurrency must be 1..256');
  const lateAfterSeconds = values['late-after'] === undefined ? 60 : Number(values['late-after']);
  if (!Number.isSafeInteger(lateAfterSeconds) || lateAfterSeconds < 0)
    throw new UsageError('--late-after must be a whole number of seconds');
  const tracerSetting = values.tracer ?? 'auto';
  if (tracerSetting !== 'auto' && tracerSetting !== 'none' && !TRACER_KINDS.includes(tracerSetting as TracerKind))
    throw new UsageError(`--tracer must be auto, ${TRACER_KINDS.join(', ')} or none`);
  const chains = values.chain === undefined ? [...deps.chains] : chainList(values.chain);
  const progress = (line: string) => {
    if (!flags.has('quiet')) deps.err(line);
  };

  // Whole seconds: block timestamps are seconds.
  const fromSeconds = Math.ceil(fromMs / 1000);
  const toSeconds = Math.ceil(toMs / 1000);
  const scopes: ChainScope[] = [];
  const swaps: OnChainSwap[] = [];
  const unexamined: UnexaminedTransaction[] = [];
  const tokens = new Map<string, TokenMeta>();
  for (const chainId of chains) {
    const { reader, router, helper } = deps.chain(chainId);
    const range = await blockRangeForTime(reader, fromSeconds, toSeconds);
    const total = Math.max(0, range.toBlock - range.fromBlock + 1);
    progress(`settle: chain ${chainId}: blocks ${range.fromBlock}..${range.toBlock} (${total} blocks)`);
    if (!range.ended) {
      // Always said, even with --quiet: the report is incomplete.
      deps.err(
        `settle: warning: chain ${chainId}: the node has no block at or after ${new Date(toMs).toISOString()} yet ` +
          `(the period is not over, or the node lags): swaps in later blocks of the period are missing`,
      );
    }
    const tracer = new TracerChoice(tracerSetting as TracerKind | 'auto' | 'none');
    const scan = await scanSwaps({
      reader,
      router,
      fromBlock: range.fromBlock,
      toBlock: range.toBlock,
      span,
      concurrency,
      tracer,
      onProgress: (done, n, apart) => {
        if (total > span) {
          const pct = Math.floor(((done - range.fromBlock + 1) * 100) / total);
          progress(
            `settle: chain ${chainId}: through block ${done} (${pct} %), ${n} swaps` +
              (apart ? `, ${apart} transactions not examined` : ''),
          );
        }
      },
    });
    const found = scan.swaps;
    const kind = await tracer.kind();
    if (scan.traced > 0) progress(`settle: chain ${chainId}: ${scan.traced} transactions traced with ${kind}`);
    if (scan.unexamined.length > 0) {
      // Always said, even with --quiet: the report is incomplete.
      deps.err(
        `settle: warning: chain ${chainId}: ${scan.unexamined.length} transactions that touched the router could not be ` +
          `examined and are listed apart (unexamined): ${scan.unexamined[0]!.reason}` +
          (tracer.refusals.length ? ` (the node refused: ${tracer.refusals.join('; ')})` : ''),
      );
    }
    unexamined.push(...scan.unexamined);
    const quoteToken = await reader.quoteToken(helper);
    for (const address of new Set([quoteToken, ...found.flatMap((s) => [s.tokenIn, s.tokenOut])])) {
      tokens.set(`${chainId}:${address}`, await reader.token(address));
    }
    scopes.push({ chainId, router, ...range, quoteToken, quote: tokens.get(`${chainId}:${quoteToken}`)! });
    const oldest = await deps.lookup.oldest(chainId);
    if (found.length > 0 && (oldest === undefined || oldest > fromMs)) {
      const since = oldest === undefined ? 'holds no record' : `starts at ${new Date(oldest).toISOString()}`;
      deps.err(
        `settle: warning: chain ${chainId}: the audit trail ${since}; swaps signed before it are listed apart (retention: AUDIT_RETENTION_DAYS)`,
      );
    }
    swaps.push(...found);
    progress(`settle: chain ${chainId}: ${found.length} swaps`);
  }
  const report = await buildSettlement({
    fromSeconds,
    toSeconds,
    chains: scopes,
    swaps,
    unexamined,
    lateAfterSeconds,
    token: (chainId, address) => tokens.get(`${chainId}:${address}`)!,
    lookup: deps.lookup,
  });
  const text =
    format === 'json'
      ? settlementJson(report)
      : flags.has('detail')
        ? settlementSwapsCsv(report)
        : settlementCsv(report);
  if (values.out !== undefined) writeFileSync(values.out, text);
  else deps.out(text);
  if (values.metrics !== undefined) {
    // Renamed into place: a textfile collector never reads half a file.
    // Readable by others: node_exporter often runs as its own user.
    replaceFile(values.metrics, await settlementMetrics(report), 0o644);
  }
  const t = report.totals;
  const excess = report.signals.reduce((n, s) => n + s.excessSwaps, 0);
  const late = report.signals.reduce((n, s) => n + s.lateSwaps.length, 0);
  // The outcome line is always printed (even with --quiet) when something needs a look.
  const outcome =
    `settle: ${t.attributed} swaps attributed, ${t.listedApart} listed apart, ` +
    `${t.unexaminedTransactions} transactions not examined; ${excess} swaps beyond their signature's requests, ` +
    `${late} late (> ${lateAfterSeconds} s)` +
    (values.out !== undefined ? `; written to ${values.out}` : '') +
    (report.complete ? '' : '; the report is INCOMPLETE');
  if (t.unexaminedTransactions > 0 || excess > 0) deps.err(outcome);
  else progress(outcome);
  return report.complete ? 0 : SETTLE_INCOMPLETE;
}
