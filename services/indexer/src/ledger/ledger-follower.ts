/**
 * Follows the chain block by block behind the admitted head (the indexer's head guard: nothing is
 * read past a head the guard refused, a node behind the clock or one that jumps) and keeps the
 * maker's ledger: for each block, the router's swaps found as the settlement finds them
 * (scan-swaps.ts: direct calls, and nested ones through an executor or a split route by tracing),
 * attributed as the settlement attributes them (attribute-swap.ts), committed with the block's
 * hash (ledger-store.ts). Beside them, the router calls that reverted (scan-reverts.ts: the
 * block's receipts, then only the failed transactions' traces; and the calls an executor caught
 * inside a transaction that swapped), each with the router's error and, when its signature is in
 * the audit trail, who asked for it.
 *
 * Unlike the book, no block is skipped: a block that fails (a trace the node could not give, a
 * timeout) is read again until it passes, and the ledger waits meanwhile. So is a block whose
 * time cannot be the chain's: stamped ahead of the clock by more than the head guard allows a
 * head (its `aheadOfClock`, MAX_HEAD_LEAD_MS), before its parent, or with swaps the scan dates
 * otherwise. The head guard sees only heads; the headers behind them come from the same node,
 * and a block's time is the limits' clock (limits.ts): one block stamped in 2100 would expire
 * every swap of the window as it arrives.
 *
 * A block whose parent is not the one the ledger holds is a reorg: the ledger walks back to the
 * last block it shares with the chain, forgets what it held above it, and goes on from there.
 */
import {
  hexToNumber,
  isBlockHash,
  isRpcObject,
  numberToHex,
  RpcError,
  type LedgerCursor,
  type LedgerEntry,
  type LedgerRevert,
  type Logger,
  type RpcTransport,
} from '@pmm/core';
import {
  attributeRevert,
  attributeSwap,
  ledgerEntryOf,
  ledgerRevertOf,
  scanBlockReverts,
  scanSwaps,
  TracerChoice,
  type ChainReader,
  type EntryTokens,
  type OnChainRevert,
  type SignatureRecords,
} from '@pmm/operator';
import type { BlockHead } from '../chain/block-source';
import { aheadOfClock } from '../domain/head-guard';
import { outageLog } from '../outage-log';
import type { LedgerStore } from './ledger-store';

export interface LedgerFollowerDeps {
  chainId: number;
  router: string;
  helper: string;
  rpc: RpcTransport;
  reader: ChainReader;
  /** The tracer setting (`auto`: the first that works). */
  tracer: TracerChoice;
  store: LedgerStore;
  audit: SignatureRecords;
  /** The newest head the head guard admitted. */
  latestHead: () => BlockHead | undefined;
  timeoutMs: number;
  /** The head guard's MAX_HEAD_LEAD_MS: a block stamped further ahead of the clock is not committed. */
  maxLeadMs: number;
  /** How far back a reorg is followed (the block hashes the store keeps). */
  maxReorgDepth: number;
  /** Wait after a failed block before it is read again, ms. */
  retryMs: number;
  logger: Logger;
  /** After each committed block (metrics, tests): its swaps, its reverted calls and the head it was read behind. */
  onCommit?: (
    block: number,
    entries: readonly LedgerEntry[],
    head: BlockHead,
    blockTime: number,
    reverts: readonly LedgerRevert[],
  ) => void;
  /** After each rollback: the block gone back to and the swaps and reverted calls removed. */
  onReorg?: (to: number, removed: { swaps: number; reverts: number }) => void;
  onError?: () => void;
}

export interface LedgerFollower {
  /** Wakes the loop (a new head). */
  wake(): void;
  stop(): Promise<void>;
}

interface Header {
  number: number;
  hash: string;
  parentHash: string;
  timestamp: number;
}

export function startLedgerFollower(deps: LedgerFollowerDeps): LedgerFollower {
  const { store, logger: log } = deps;
  const router = deps.router.toLowerCase();
  const failures = outageLog(log, 'ledger block');
  let quote: EntryTokens['quote'] | undefined;
  /** The last block committed: the parent of the next one, whose time is then not read again. */
  let committed: Header | undefined;

  const header = async (number: number): Promise<Header> => {
    const raw = await deps.rpc.request('eth_getBlockByNumber', [numberToHex(number), false], deps.timeoutMs);
    if (!isRpcObject(raw) || !isBlockHash(raw.hash) || !isBlockHash(raw.parentHash))
      throw new RpcError(`block ${number}: no such block, or a header without hashes`, -32603);
    return {
      number,
      hash: raw.hash.toLowerCase(),
      parentHash: raw.parentHash.toLowerCase(),
      timestamp: hexToNumber(raw.timestamp, 'block timestamp'),
    };
  };

  /** Walks back from `from` to the last block whose hash the ledger and the chain share, and rolls back to it. */
  const rollbackToFork = async (from: number): Promise<void> => {
    for (let n = from; n > from - deps.maxReorgDepth; n--) {
      const held = await store.hashAt(n);
      if (held === undefined) break;
      const fork = await header(n);
      if (fork.hash === held) {
        const removed = await store.rollback({ number: n, hash: held, time: fork.timestamp });
        log.info('reorg: ledger rolled back', { to: n, removed: removed.swaps, removedReverts: removed.reverts });
        deps.onReorg?.(n, removed);
        return;
      }
    }
    throw new Error(`reorg deeper than ${deps.maxReorgDepth} blocks (or hashes lost) below block ${from}`);
  };

  const tokensFor = async (bases: readonly string[]): Promise<EntryTokens> => {
    if (!quote) {
      const address = await deps.reader.quoteToken(deps.helper);
      quote = { address, ...(await deps.reader.token(address)) };
    }
    const metas = new Map<string, { symbol: string; decimals: number }>();
    for (const b of bases) metas.set(b, await deps.reader.token(b));
    return { quote, base: (a) => metas.get(a)! };
  };

  /**
   * The pair of a reverted call, '' when neither or both sides are the quote token, or when the
   * base does not answer its symbol: a call the router refused may name any address, and a token
   * that cannot be read must not hold the block back.
   */
  const pairOf = async (r: OnChainRevert): Promise<string> => {
    const tokens = await tokensFor([]);
    const quoteIn = r.tokenIn === tokens.quote.address;
    if (quoteIn === (r.tokenOut === tokens.quote.address)) return '';
    try {
      return `${(await deps.reader.token(quoteIn ? r.tokenOut : r.tokenIn)).symbol}/${tokens.quote.symbol}`;
    } catch {
      return '';
    }
  };

  /**
   * Throws (the block is read again) when `h`'s time is ahead of the clock past the head guard's
   * margin or before its parent's: a node that lies about it now may answer honestly next time.
   */
  const checkTime = async (h: Header): Promise<void> => {
    const now = Date.now();
    if (aheadOfClock(h.timestamp, now, deps.maxLeadMs))
      throw new RpcError(
        `block ${h.number}: stamped ${Math.round(h.timestamp - now / 1000)} s ahead of the clock (MAX_HEAD_LEAD_MS)`,
        -32603,
      );
    const parent = committed?.hash === h.parentHash ? committed : h.number > 0 ? await header(h.number - 1) : undefined;
    if (parent && parent.hash !== h.parentHash)
      throw new RpcError(`block ${h.number}: its parent changed while it was read`, -32603);
    if (parent && h.timestamp < parent.timestamp)
      throw new RpcError(
        `block ${h.number}: stamped ${parent.timestamp - h.timestamp} s before its parent (block ${parent.number})`,
        -32603,
      );
  };

  /** Reads and commits block `number` (after `cursor`); false when the block changed under it. */
  const readBlock = async (number: number, cursor: LedgerCursor | undefined, head: BlockHead): Promise<boolean> => {
    const h = await header(number);
    if (cursor && number === cursor.number + 1 && h.parentHash !== cursor.hash) {
      await rollbackToFork(cursor.number);
      return false;
    }
    await checkTime(h);
    const scan = await scanSwaps({
      reader: deps.reader,
      router,
      fromBlock: number,
      toBlock: number,
      tracer: deps.tracer,
      retryDelaysMs: [],
      // A block's transactions read at once (a node answers them in parallel): at 50 swaps a
      // block, eight at a time cost the ledger several blocks of lag.
      concurrency: 64,
    });
    const failed = await scanBlockReverts({
      reader: deps.reader,
      tracer: deps.tracer,
      router,
      blockNumber: number,
      blockTime: h.timestamp,
      concurrency: 64,
    });
    const unexamined = [...scan.unexamined, ...failed.unexamined];
    if (unexamined.length > 0)
      throw new Error(`block ${number}: ${unexamined.length} transactions not examined: ${unexamined[0]!.reason}`);
    // The swaps' time is the header's (the scan reads it again, or takes it from the logs).
    const other = scan.swaps.find((s) => s.blockTime !== h.timestamp);
    if (other)
      throw new RpcError(
        `block ${number}: a swap's block time ${other.blockTime} is not its header's ${h.timestamp}`,
        -32603,
      );
    const tokens = await tokensFor(
      [...new Set(scan.swaps.flatMap((s) => [s.tokenIn, s.tokenOut]))].filter(
        (a) => a !== quote?.address && a !== undefined,
      ),
    );
    const entries: LedgerEntry[] = [];
    for (const swap of scan.swaps) {
      const entry = ledgerEntryOf(swap, await attributeSwap(swap, deps.audit), tokens, h.hash);
      if (entry) entries.push(entry);
    }
    const reverts: LedgerRevert[] = [];
    for (const r of [...failed.reverts, ...scan.reverts])
      reverts.push(ledgerRevertOf(r, await attributeRevert(r, deps.audit), await pairOf(r), h.hash));
    // The logs were read by number: the block must still be the one whose parent was checked.
    if ((await header(number)).hash !== h.hash) return false;
    await store.commit({ number, hash: h.hash, time: h.timestamp }, entries, reverts);
    committed = h;
    deps.onCommit?.(number, entries, head, h.timestamp, reverts);
    return true;
  };

  /** One step: a reorg at or below the cursor, or the next block. False when there is nothing to do. */
  const step = async (): Promise<boolean> => {
    const head = deps.latestHead();
    if (!head) return false;
    const cursor = await store.cursor();
    if (cursor && head.number <= cursor.number) {
      // The head at or below what the ledger holds: the same chain, or another branch.
      const held = await store.hashAt(head.number);
      if (held === undefined || held === head.hash.toLowerCase()) return false;
      await rollbackToFork(head.number);
      return true;
    }
    // A ledger without a cursor starts at the head it first sees.
    const next = cursor ? cursor.number + 1 : head.number;
    await readBlock(next, cursor, head);
    return true;
  };

  let running = true;
  let wakeUp: (() => void) | undefined;
  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      wakeUp = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  const loop = (async () => {
    while (running) {
      try {
        const worked = await step();
        failures.ok();
        if (!worked) await sleep(1_000);
      } catch (err) {
        deps.onError?.();
        failures.failed(err);
        await sleep(deps.retryMs);
      }
    }
  })();

  return {
    wake: () => wakeUp?.(),
    async stop() {
      running = false;
      wakeUp?.();
      await loop;
    },
  };
}
