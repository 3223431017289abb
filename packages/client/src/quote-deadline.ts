/**
 * A signed quote is good until its `deadline` (Unix seconds: the last block timestamp at which
 * the router accepts it). The SDK never hands out, nor sends, a quote past it: a swap sent then
 * can only revert (`QuoteExpired`) and cost its gas. The clock is this machine's; a chain's block
 * timestamps may run a little ahead of or behind it, so a quote close to its deadline may still
 * fail on-chain: send promptly.
 */
import type { SignSwapResponse } from '@pmm/protocol';
import { PmmApiError } from './pmm-api-error';

/** Throws PmmApiError QUOTE_EXPIRED (status 0) when `quote.deadline` has passed at `nowMs`. */
export function assertQuoteLive(quote: SignSwapResponse, nowMs: number = Date.now()): void {
  // An answer without the field (a gateway older than the field) is left to the router.
  if (typeof quote.deadline !== 'number') return;
  const now = Math.floor(nowMs / 1000);
  if (now > quote.deadline) {
    throw new PmmApiError(
      0,
      'QUOTE_EXPIRED',
      `the quote's deadline (${quote.deadline}) passed ${now - quote.deadline} s ago on this machine's clock; ask for a new one`,
    );
  }
}
