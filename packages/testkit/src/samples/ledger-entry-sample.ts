/**
 * A ledger record of an executed swap (core's ledger-entry.ts) for tests of the stores and the
 * readers: one of acme's swaps on 8453 in block `block` at `blockTime`, 3000 USDC for 1 WETH.
 */
import type { LedgerEntry } from '@pmm/core';

export function sampleLedgerEntry(block: number, blockTime: number, over: Partial<LedgerEntry> = {}): LedgerEntry {
  return {
    chainId: 8453,
    blockNumber: block,
    blockHash: `0x${String(block).repeat(64).slice(0, 64)}`,
    blockTime,
    txHash: `0x${'ab'.repeat(31)}${String(block).padStart(2, '0').slice(-2)}`,
    callIndex: 0,
    via: 'direct',
    integratorId: 'acme',
    keyId: 'pmm_acme',
    requestId: `req-${block}`,
    base: '0x4200000000000000000000000000000000000006',
    quote: '0x833589fcd6edb6e08f4c7c32d4f71b54bda02913',
    pair: 'WETH/USDC',
    side: 'ask',
    baseAmount: '1',
    quoteAmount: '3000',
    executionPrice: '3000',
    amountOut: '1000000000000000000',
    ...over,
  };
}
