/**
 * A chain's ledger written as the ledger process writes it, for the console's tests: its store's
 * commit and rollback (swaps, day totals, cursor: @pmm/indexer's ledger-store.ts, core's
 * ledger-entry.ts) and its rolling markouts (rolling-markouts.ts), on the harness's Redis.
 */
import {
  createLogger,
  type LedgerDayFate,
  type LedgerEntry,
  type LedgerRevert,
  type RedisClient,
  type RedisKeys,
} from '@pmm/core';
import type { PairRegistry } from '@pmm/protocol';
import { createLedgerMetrics, createLedgerStore, ledgerStoreKeys, RollingMarkouts } from '@pmm/indexer';

export const WETH = '0x4200000000000000000000000000000000000006';
export const USDC = '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913';

export function ledgerWriter(redis: RedisClient, keys: RedisKeys, chainId: number) {
  const store = createLedgerStore(redis, ledgerStoreKeys(keys, chainId), 256);
  const rolling = new RollingMarkouts(
    redis,
    keys.ledgerMarkouts(chainId),
    createLedgerMetrics({ chainId, defaultMetrics: false }),
    createLogger({ service: 'test-ledger', silent: true }),
  );
  let tx = 0;
  const hash = (n: number) => `0x${n.toString(16).padStart(64, '0')}`;
  return {
    /** A WETH/USDC swap of `integratorId` ('' unattributed) in `block`, at `blockTime` (Unix s). */
    entry(block: number, blockTime: number, integratorId: string, quoteAmount: string): LedgerEntry {
      tx++;
      return {
        chainId,
        blockNumber: block,
        blockHash: hash(block),
        blockTime,
        txHash: hash(1_000_000 + tx),
        callIndex: 0,
        via: 'direct',
        integratorId,
        keyId: integratorId ? `pmm_${integratorId}` : '',
        requestId: integratorId ? `req-${tx}` : '',
        ...(integratorId ? {} : { reason: 'no audit record of its signature' }),
        base: WETH.toLowerCase(),
        quote: USDC.toLowerCase(),
        pair: 'WETH/USDC',
        side: 'ask',
        baseAmount: '1',
        quoteAmount,
        executionPrice: quoteAmount,
        amountOut: '1000000000000000000',
      };
    },
    /** Commits `block` with its swaps, reverted calls and the signatures judged at it. */
    commit: (block: number, entries: LedgerEntry[], reverts: LedgerRevert[] = [], fates: LedgerDayFate[] = []) =>
      store.commit({ number: block, hash: hash(block), time: entries[0]?.blockTime ?? 0 }, entries, reverts, fates),
    /** A firm signature of `integratorId` judged at a block of `blockTime`. */
    fate: (integratorId: string, fate: LedgerDayFate['fate'], blockTime: number): LedgerDayFate => ({
      integratorId,
      firm: true,
      fate,
      blockTime,
    }),
    /** A reorg back to `block`, taking out the judgements `undone` made above it. */
    rollback: (block: number, undone: LedgerDayFate[] = []) =>
      store.rollback({ number: block, hash: hash(block) }, undone),
    markouts: (list: { integratorId: string; bps?: number; referenceBps?: number }[]) => rolling.add(list),
    /** The chain's pair registry (WETH against USDC), as the indexer writes it: the console's symbols. */
    registry: () => {
      const registry: PairRegistry = {
        chainId,
        quoteToken: { address: USDC, symbol: 'USDC', decimals: 6 },
        baseTokens: [{ address: WETH, symbol: 'WETH', decimals: 18 }],
        blockNumber: 1,
        refreshedAt: Date.now(),
      };
      return redis.set(keys.pairs(chainId), JSON.stringify(registry));
    },
  };
}

/**
 * Resolves when the UTC day has at least `marginMs` left: a test that writes swaps "today" and
 * reads the console's totals of the day must not straddle midnight.
 */
export async function awayFromMidnight(marginMs = 60_000): Promise<void> {
  const left = 86_400_000 - (Date.now() % 86_400_000);
  if (left < marginMs) await new Promise((r) => setTimeout(r, left + 1_000));
}
