/**
 * A ledger record of a reverted router call (core's ledger-revert.ts) for tests of the stores and
 * the readers: block `block` at `blockTime`, a direct call attributed to `acme`, QuoteExpired.
 */
import type { LedgerRevert } from '@pmm/core';

export function sampleLedgerRevert(block: number, blockTime: number, over: Partial<LedgerRevert> = {}): LedgerRevert {
  const n = block.toString(16);
  return {
    chainId: 8453,
    blockNumber: block,
    blockHash: `0x${n.padStart(64, '0')}`,
    blockTime,
    txHash: `0x${n.padStart(64, 'f')}`,
    callIndex: 0,
    via: 'direct',
    txReverted: true,
    reason: 'QuoteExpired',
    args: { quoteTimestamp: String(blockTime - 70), blockTimestamp: String(blockTime) },
    user: '0x00000000000000000000000000000000000000aa',
    txFrom: '0x00000000000000000000000000000000000000aa',
    integratorId: 'acme',
    keyId: 'pmm_acme',
    requestId: `req-${block}`,
    quoteTimestamp: blockTime - 70,
    tokenIn: '0x833589fcd6edb6e08f4c7c32d4f71b54bda02913',
    tokenOut: '0x4200000000000000000000000000000000000006',
    amountIn: '1000000',
    minAmountOut: '0',
    pair: 'WETH/USDC',
    ...over,
  };
}
