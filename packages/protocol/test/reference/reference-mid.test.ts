/**
 * A feed's answer and a router mid, one in the other's units (reference/reference-mid.ts).
 */
import { feedAnswerFromMidX18, midX18FromFeedAnswer } from '../../src';

describe('reference mid', () => {
  it('behavior: 3000 USDC (6 decimals) per WETH (18) with an 8-decimal feed is the router mid 3000e6 × 1e18 / 1e18', () => {
    const scale = { feedDecimals: 8, baseDecimals: 18, quoteDecimals: 6 };
    expect(midX18FromFeedAnswer(3000_00000000n, scale)).toBe(3000n * 10n ** 6n);
    expect(feedAnswerFromMidX18(3000n * 10n ** 6n, scale)).toBe(3000_00000000n);
  });

  it('behavior: 60000 USDT (18 decimals) per WBTC (8): the mid grows by the decimals between them', () => {
    const scale = { feedDecimals: 8, baseDecimals: 8, quoteDecimals: 18 };
    const mid = midX18FromFeedAnswer(60000_00000000n, scale);
    expect(mid).toBe((60000n * 10n ** 18n * 10n ** 18n) / 10n ** 8n);
    expect(feedAnswerFromMidX18(mid, scale)).toBe(60000_00000000n);
  });
});
