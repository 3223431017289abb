/**
 * A swap the scan found (scan-swaps.ts) and its attribution (attribute-swap.ts) as a ledger entry:
 * pair, the maker's side, amounts and execution price. Pure: the ledger process reads the chain
 * and the audit trail, this only arranges what they said.
 */
import type { LedgerEntry } from '@pmm/core';
import { formatUnits } from '@pmm/protocol';
import type { Attribution } from '../swaps/attribute-swap';
import type { OnChainSwap } from '../swaps/scan-swaps';

export interface EntryTokens {
  /** Lowercase address, symbol and decimals of the chain's quote token. */
  quote: { address: string; symbol: string; decimals: number };
  /** Symbol and decimals of a base token. */
  base(address: string): { symbol: string; decimals: number };
}

const PRICE_DECIMALS = 18;

/** Quote per base as a decimal string, from raw amounts (rounded down at 18 decimals). */
export function executionPrice(quoteRaw: bigint, quoteDecimals: number, baseRaw: bigint, baseDecimals: number): string {
  if (baseRaw === 0n) return '0';
  const scaled = (quoteRaw * 10n ** BigInt(baseDecimals + PRICE_DECIMALS)) / (baseRaw * 10n ** BigInt(quoteDecimals));
  return formatUnits(scaled, PRICE_DECIMALS);
}

/**
 * The entry of a swap, or undefined when neither token is the chain's quote token (not a pair
 * the maker quotes). `blockHash`: the block the swap was read in.
 */
export function ledgerEntryOf(
  swap: OnChainSwap,
  attribution: Attribution,
  tokens: EntryTokens,
  blockHash: string,
): LedgerEntry | undefined {
  const quoteIn = swap.tokenIn === tokens.quote.address;
  const quoteOut = swap.tokenOut === tokens.quote.address;
  if (quoteIn === quoteOut) return undefined;
  const base = quoteIn ? swap.tokenOut : swap.tokenIn;
  const meta = tokens.base(base);
  // The user paid quote: the maker sold base (ask). The user paid base: the maker bought it (bid).
  const [baseRaw, quoteRaw] = quoteIn ? [swap.amountOut, swap.amountIn] : [swap.amountIn, swap.amountOut];
  const attributed = 'entry' in attribution ? attribution.entry.record : undefined;
  // The firm quote's amount, when the swap executed against one (attribute-swap.ts decides).
  const quoted = 'entry' in attribution ? attribution.quotedAmountOut : undefined;
  return {
    chainId: swap.chainId,
    blockNumber: swap.blockNumber,
    blockHash,
    blockTime: swap.blockTime,
    txHash: swap.txHash,
    callIndex: swap.callIndex,
    via: swap.via,
    integratorId: attributed?.integratorId ?? '',
    keyId: attributed?.keyId ?? '',
    requestId: attributed?.requestId ?? '',
    ...('reason' in attribution ? { reason: attribution.reason } : {}),
    base,
    quote: tokens.quote.address,
    pair: `${meta.symbol}/${tokens.quote.symbol}`,
    side: quoteIn ? 'ask' : 'bid',
    baseAmount: formatUnits(baseRaw, meta.decimals),
    quoteAmount: formatUnits(quoteRaw, tokens.quote.decimals),
    executionPrice: executionPrice(quoteRaw, tokens.quote.decimals, baseRaw, meta.decimals),
    amountOut: swap.amountOut.toString(),
    ...(quoted !== undefined ? { quotedAmountOut: quoted } : {}),
  };
}
