/**
 * The operator's `audit` commands (the logic behind audit.ts, apart from process concerns so
 * that tests run it in-process against a real Redis and a real chain):
 * - `tx <chainId> <txHash>`: finds every call of the router's swap in the transaction (tracing
 *   it when a contract calls the router), the audit records of each call's signature, and
 *   prints who asked for each and when;
 * - `list` / `export`: the records by chain, integrator, user and time range.
 */
import { decodeSwapCalldata, decodeVerificationData } from '@pmm/protocol';
import { TracerChoice } from '../chain/call-trace';
import type { ChainReader } from '../chain/chain-reader';
import { routerSwapCalls } from '../swaps/scan-swaps';
import { quoteGapBps } from '@pmm/core';
import { AUDIT_CSV_HEADER, auditCsvLine, auditHumanLine, auditJsonLine, type AuditFormat } from './audit-export';
import type { AuditEntry, AuditFilter } from '../audit-trail/audit-reader';
import { UsageError, addressArg, chainIdArg, chainList, parseOptions, timeArg } from '../cli/cli-options';
import { reportErrors } from '../cli/run-operator-command';

export const AUDIT_USAGE = `usage: audit <command> [options]

  tx <chainId> <txHash> [--json]
        Every call of the router's swap in the transaction (its own, or those of an executor
        contract, read from the node's tracer) and, for each, the audit records of its signature:
        which integrator and API key asked for it, when, and the request id; for a firm quote
        (a /v2 sign with amountIn), the amountOut quoted beside the amountOut executed and the
        gap in bps. Reverted inner calls are shown as such. (The signature does not cover the
        amounts: requests for the same quote in the same second share it; the one for the
        call's amounts is marked.)
  list   [--chain <id,id>|all] [--integrator <id>] [--user <address>] [--from <time>] [--to <time>]
        One line per record, oldest first, chain by chain.
  export [the same filters] [--format jsonl|csv]
        Every matching record as JSON lines (default) or CSV.

Times are YYYY-MM-DD or ISO 8601, UTC unless a zone is given; --to is exclusive.
Exit codes: 0 done, 1 error, 2 usage, 3 (tx) a swap has no audit record of its signature.`;

export interface AuditCommandDeps {
  trail: {
    bySignature(chainId: number, signature: string, timestamp: number): Promise<AuditEntry[]>;
    list(filter: AuditFilter): AsyncIterable<AuditEntry>;
  };
  /** The chain's reader and router address (needs the CHAINS setting); throws when not configured. */
  chain(chainId: number): { reader: ChainReader; router: string };
  out(line: string): void;
  err(line: string): void;
}

export function runAuditCommand(argv: readonly string[], deps: AuditCommandDeps): Promise<number> {
  return reportErrors('audit', AUDIT_USAGE, deps, async () => {
    const [command, ...rest] = argv;
    if (command === 'tx') return auditTx(rest, deps);
    if (command === 'list' || command === 'export') return auditList(command, rest, deps);
    throw new UsageError(command ? `unknown command "${command}"` : 'a command is required');
  });
}

async function auditTx(argv: readonly string[], deps: AuditCommandDeps): Promise<number> {
  const { flags, positionals } = parseOptions(argv, [], ['json']);
  if (positionals.length !== 2) throw new UsageError('tx needs <chainId> <txHash>');
  const chainId = chainIdArg(positionals[0]!);
  const hash = positionals[1]!;
  if (!/^0x[0-9a-fA-F]{64}$/.test(hash)) throw new UsageError(`"${hash}" is not a transaction hash`);
  const { reader, router: routerAddress } = deps.chain(chainId);
  const router = routerAddress.toLowerCase();
  const tx = await reader.transaction(hash);
  if (!tx) throw new Error(`transaction ${hash} not found on chain ${chainId}`);
  const [status, found] = await Promise.all([
    reader.receiptStatus(hash),
    routerSwapCalls(reader, new TracerChoice('auto'), router, tx),
  ]);
  // A direct call's amountOut is not in the transaction: it is what the router sent in it.
  const sentByRouter =
    status === 1 && tx.blockNumber !== undefined
      ? (await reader.transfers(router, 'from', tx.blockNumber, tx.blockNumber)).filter(
          (l) => l.txHash.toLowerCase() === hash.toLowerCase(),
        )
      : [];
  if ('unexamined' in found)
    throw new Error(`transaction ${hash} does not call the router itself and ${found.unexamined}`);
  if (found.calls.length === 0)
    throw new Error(`transaction ${hash} holds no call of the router's swap(...) (router ${router})`);
  const swaps = await Promise.all(
    found.calls.map(async (call, index) => {
      const args = decodeSwapCalldata(call.input);
      const v = decodeVerificationData(args.verificationData);
      const timestamp = Number(args.quoteTimestamp);
      const records = await deps.trail.bySignature(chainId, v.signature, timestamp);
      const matches = (e: AuditEntry) =>
        e.record.userAddress === v.userAddress &&
        e.record.fee === v.fee.toString() &&
        e.record.tokenIn === args.tokenIn &&
        e.record.tokenOut === args.tokenOut &&
        e.record.timestamp === timestamp;
      // The signature does not cover the amounts: a request for these exact amounts is this call's.
      const sameAmounts = (e: AuditEntry) =>
        e.record.amountIn === args.amountIn.toString() && e.record.minAmountOut === args.minAmountOut.toString();
      // A traced call's return data is its amountOut; a direct one's is the tokenOut the router sent.
      const amountOut =
        found.via === 'nested'
          ? call.output.length >= 66
            ? BigInt(call.output.slice(0, 66))
            : undefined
          : status === 1
            ? sentByRouter.filter((l) => l.token === args.tokenOut).reduce((t, l) => t + l.value, 0n)
            : undefined;
      /** The quoted amountOut of a record for this call's amounts, and its gap to what executed. */
      const quote = (e: AuditEntry) => {
        if (e.record.amountOut === undefined || !sameAmounts(e)) return undefined;
        const quoted = BigInt(e.record.amountOut);
        const executedOut = call.reverted ? undefined : amountOut;
        const gapBps = executedOut === undefined ? undefined : quoteGapBps(quoted, executedOut);
        return { quoted, blockNumber: e.record.blockNumber, gapBps };
      };
      return { index, call, args, v, timestamp, records, matches, sameAmounts, amountOut, quote };
    }),
  );
  const state = status === 1 ? 'success' : status === 0 ? 'reverted' : 'pending';
  const executed = (s: (typeof swaps)[number]) => !s.call.reverted && status === 1;
  if (flags.has('json')) {
    deps.out(
      JSON.stringify({
        chainId,
        txHash: hash.toLowerCase(),
        blockNumber: tx.blockNumber ?? null,
        status: state,
        from: tx.from,
        to: tx.to ?? null,
        toRouter: tx.to === router,
        via: found.via,
        swaps: swaps.map((s) => ({
          index: s.index,
          reverted: s.call.reverted,
          caller: s.call.from,
          tokenIn: s.args.tokenIn,
          amountIn: s.args.amountIn.toString(),
          tokenOut: s.args.tokenOut,
          minAmountOut: s.args.minAmountOut.toString(),
          amountOut: s.amountOut?.toString() ?? null,
          quoteTimestamp: s.timestamp,
          fee: s.v.fee.toString(),
          originRate: s.v.originRate.toString(),
          userAddress: s.v.userAddress,
          signature: s.v.signature,
          records: s.records.map((e) => ({
            id: e.id,
            matchesCalldata: s.matches(e),
            sameAmounts: s.sameAmounts(e),
            ...e.record,
            // The firm quote of these amounts against what executed (null: not a firm quote, or not executed).
            quoteGapBps: s.quote(e)?.gapBps ?? null,
          })),
        })),
      }),
    );
  } else {
    const human = status === 1 ? 'succeeded' : status === 0 ? 'reverted' : 'not mined yet';
    deps.out(`transaction ${hash.toLowerCase()} on chain ${chainId}: block ${tx.blockNumber ?? '-'}, ${human}`);
    deps.out(
      `  sent by ${tx.from} to ${tx.to ?? '-'}` +
        (found.via === 'direct'
          ? ' (the router)'
          : `; ${swaps.length} call${swaps.length === 1 ? '' : 's'} of the router's swap inside (traced)`),
    );
    for (const s of swaps) {
      deps.out(
        `  swap ${s.index + 1} of ${swaps.length}` +
          (found.via === 'nested' ? `, called by ${s.call.from}` : '') +
          (s.call.reverted ? ': REVERTED, not a swap' : ''),
      );
      deps.out(
        `    ${s.args.amountIn} of ${s.args.tokenIn} for ${s.args.tokenOut}, minAmountOut ${s.args.minAmountOut}` +
          (s.amountOut !== undefined && !s.call.reverted ? `, amountOut ${s.amountOut}` : '') +
          `, quoteTimestamp ${s.timestamp} (${new Date(s.timestamp * 1000).toISOString()})`,
      );
      deps.out(`    signed: fee ${s.v.fee}, originRate ${s.v.originRate}, user ${s.v.userAddress}`);
      deps.out(`    signature ${s.v.signature}`);
      if (s.records.length === 0)
        deps.out('    no audit record of this signature: not issued by this service, or older than the retention');
      for (const e of s.records) {
        const r = e.record;
        deps.out(
          `    asked for by integrator ${r.integratorId} (API key ${r.keyId || 'unknown'}) at ${new Date(r.time).toISOString()}, ` +
            `request ${r.requestId}, signed with ${r.signer}` +
            (s.sameAmounts(e)
              ? ', for these amounts'
              : r.amountIn === undefined
                ? ', without amounts'
                : `, for amountIn ${r.amountIn}`) +
            (s.matches(e) ? '' : ' — WARNING: the record does not match the calldata'),
        );
        const q = s.quote(e);
        if (q)
          deps.out(
            `    quoted amountOut ${q.quoted} at block ${q.blockNumber ?? '-'}; executed ` +
              (q.gapBps === undefined ? '-' : `${s.amountOut} (${q.gapBps >= 0 ? '+' : ''}${q.gapBps} bps)`),
          );
      }
    }
  }
  // 3: a swap that executed (or, for a reverted transaction, was attempted) without a record.
  const checked = swaps.filter((s) => executed(s) || status !== 1);
  return checked.some((s) => s.records.length === 0) ? 3 : 0;
}

async function auditList(command: 'list' | 'export', argv: readonly string[], deps: AuditCommandDeps): Promise<number> {
  const { values, positionals } = parseOptions(argv, ['chain', 'integrator', 'user', 'from', 'to', 'format']);
  if (positionals.length > 0) throw new UsageError(`unexpected argument "${positionals[0]}"`);
  const format = values.format ?? 'jsonl';
  if (command === 'list' && values.format !== undefined) throw new UsageError('--format is for export');
  if (format !== 'jsonl' && format !== 'csv') throw new UsageError('--format must be jsonl or csv');
  const filter: AuditFilter = {
    chains: chainList(values.chain),
    integratorId: values.integrator,
    userAddress: addressArg('user', values.user),
    fromMs: timeArg('from', values.from),
    toMs: timeArg('to', values.to),
  };
  const fmt = format as AuditFormat;
  if (command === 'export' && fmt === 'csv') deps.out(AUDIT_CSV_HEADER);
  let n = 0;
  for await (const entry of deps.trail.list(filter)) {
    n++;
    if (command === 'list') deps.out(auditHumanLine(entry));
    else deps.out(fmt === 'csv' ? auditCsvLine(entry) : auditJsonLine(entry));
  }
  if (command === 'list') deps.err(`${n} record${n === 1 ? '' : 's'}`);
  return 0;
}
