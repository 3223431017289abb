/**
 * The operator's `audit` commands (the logic behind cli/audit.ts, apart from process concerns so
 * that tests run it in-process against a real Redis and a real chain):
 * - `tx <chainId> <txHash>`: decodes the transaction's swap calldata, finds the audit record of
 *   its signature, and prints who asked for it and when;
 * - `list` / `export`: the records by chain, integrator, user and time range.
 */
import { decodeSwapCalldata, decodeVerificationData } from '@pmm/protocol';
import type { ChainReader } from '../chain/chain-reader';
import {
  AUDIT_CSV_HEADER,
  auditCsvLine,
  auditHumanLine,
  auditJsonLine,
  type AuditFormat,
} from './audit-export';
import type { AuditEntry, AuditFilter } from '../store/audit-reader';
import { UsageError, addressArg, chainIdArg, chainList, parseOptions, timeArg } from './cli-options';
import { reportErrors } from './run-operator-command';

export const AUDIT_USAGE = `usage: audit <command> [options]

  tx <chainId> <txHash> [--json]
        Decodes the transaction's swap calldata and prints the audit records of its signature:
        which integrator and API key asked for it, when, and the request id. (The signature
        does not cover the amounts: requests for the same quote in the same second share it;
        the one for this transaction's amounts is marked.)
  list   [--chain <id,id>|all] [--integrator <id>] [--user <address>] [--from <time>] [--to <time>]
        One line per record, oldest first, chain by chain.
  export [the same filters] [--format jsonl|csv]
        Every matching record as JSON lines (default) or CSV.

Times are YYYY-MM-DD or ISO 8601, UTC unless a zone is given; --to is exclusive.
Exit codes: 0 done, 1 error, 2 usage, 3 (tx) no audit record of the signature.`;

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
  const { reader, router } = deps.chain(chainId);
  const tx = await reader.transaction(hash);
  if (!tx) throw new Error(`transaction ${hash} not found on chain ${chainId}`);
  let call;
  try {
    call = decodeSwapCalldata(tx.input);
  } catch (err) {
    throw new Error(`transaction ${hash} is not a call of swap(...): ${err instanceof Error ? err.message : ''}`);
  }
  const v = decodeVerificationData(call.verificationData);
  const timestamp = Number(call.quoteTimestamp);
  const [status, records] = await Promise.all([
    reader.receiptStatus(hash),
    deps.trail.bySignature(chainId, v.signature, timestamp),
  ]);
  const toRouter = tx.to === router.toLowerCase();
  const matches = (e: AuditEntry) =>
    e.record.userAddress === v.userAddress &&
    e.record.fee === v.fee.toString() &&
    e.record.tokenIn === call.tokenIn &&
    e.record.tokenOut === call.tokenOut &&
    e.record.timestamp === timestamp;
  // The signature does not cover the amounts: a request for these exact amounts is this transaction's.
  const sameAmounts = (e: AuditEntry) =>
    e.record.amountIn === call.amountIn.toString() && e.record.minAmountOut === call.minAmountOut.toString();
  if (flags.has('json')) {
    deps.out(
      JSON.stringify({
        chainId,
        txHash: hash.toLowerCase(),
        blockNumber: tx.blockNumber ?? null,
        status: status === 1 ? 'success' : status === 0 ? 'reverted' : 'pending',
        from: tx.from,
        to: tx.to ?? null,
        toRouter,
        swap: {
          tokenIn: call.tokenIn,
          amountIn: call.amountIn.toString(),
          tokenOut: call.tokenOut,
          minAmountOut: call.minAmountOut.toString(),
          quoteTimestamp: timestamp,
          fee: v.fee.toString(),
          originRate: v.originRate.toString(),
          userAddress: v.userAddress,
          signature: v.signature,
        },
        records: records.map((e) => ({
          id: e.id,
          matchesCalldata: matches(e),
          sameAmounts: sameAmounts(e),
          ...e.record,
        })),
      }),
    );
  } else {
    const state = status === 1 ? 'succeeded' : status === 0 ? 'reverted' : 'not mined yet';
    deps.out(`transaction ${hash.toLowerCase()} on chain ${chainId}: block ${tx.blockNumber ?? '-'}, ${state}`);
    deps.out(`  sent by ${tx.from} to ${tx.to ?? '-'}${toRouter ? ' (the router)' : ` (NOT the router ${router})`}`);
    deps.out(
      `  swap ${call.amountIn} of ${call.tokenIn} for ${call.tokenOut}, minAmountOut ${call.minAmountOut}, ` +
        `quoteTimestamp ${timestamp} (${new Date(timestamp * 1000).toISOString()})`,
    );
    deps.out(`  signed: fee ${v.fee}, originRate ${v.originRate}, user ${v.userAddress}`);
    deps.out(`  signature ${v.signature}`);
    if (records.length === 0) {
      deps.out('  no audit record of this signature: not issued by this service, or older than the retention');
    }
    for (const e of records) {
      const r = e.record;
      deps.out(
        `  asked for by integrator ${r.integratorId} (API key ${r.keyId || 'unknown'}) at ${new Date(r.time).toISOString()}, ` +
          `request ${r.requestId}, signed with ${r.signer}` +
          (sameAmounts(e)
            ? ', for these amounts'
            : r.amountIn === undefined
              ? ', without amounts'
              : `, for amountIn ${r.amountIn}`) +
          (matches(e) ? '' : ' — WARNING: the record does not match the calldata'),
      );
    }
  }
  return records.length === 0 ? 3 : 0;
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
