import { summarizeLevels, type TokenInfo } from '@pmm/protocol';
import { pairBook, usableSamples } from '../../src/domain/pair-book';

const USDT: TokenInfo = { address: '0x55d398326f99059fF775485246999027B3197955', symbol: 'USDT', decimals: 18 };
const WBTC: TokenInfo = { address: '0x0555E30da8f98308EdB960aa94C0Db47230d2B9c', symbol: 'WBTC', decimals: 8 };

describe('usableSamples', () => {
  it('behavior: stops at the first failing sample, even if later ones succeed', () => {
    expect(usableSamples([1n, 2n, 3n, 4n], [10n, 20n, undefined, 40n], 1000n)).toEqual([
      { amountIn: 1n, amountOut: 10n },
      { amountIn: 2n, amountOut: 20n },
    ]);
  });

  it('behavior: drops the first sample whose output exceeds the reserve, and stops there', () => {
    expect(usableSamples([1n, 2n, 3n], [10n, 21n, 22n], 20n)).toEqual([{ amountIn: 1n, amountOut: 10n }]);
    // Equal to the reserve is payable.
    expect(usableSamples([1n, 2n], [10n, 20n], 20n)).toHaveLength(2);
  });
});

describe('pairBook', () => {
  it('behavior: asks are bounded by the base reserve, bids by the quote reserve; best first on both sides', () => {
    const e8 = 10n ** 8n;
    const e18 = 10n ** 18n;
    const book = pairBook(
      WBTC,
      USDT,
      {
        // Asks: 60,000 USDT → 0.99 WBTC, 120,000 → 1.97, 300,000 → 4.8 (over the 4 WBTC reserve).
        asks: {
          amountsIn: [60_000n * e18, 120_000n * e18, 300_000n * e18],
          amountsOut: [(99n * e8) / 100n, (197n * e8) / 100n, (48n * e8) / 10n],
        },
        // Bids: 1 WBTC → 59,000, 2 → 117,000, 3 → failed.
        bids: { amountsIn: [e8, 2n * e8, 3n * e8], amountsOut: [59_000n * e18, 117_000n * e18, undefined] },
      },
      { base: 4n * e8, quote: 10n ** 24n },
    );
    expect(book.baseToken).toBe(WBTC.address);
    expect(book.quoteToken).toBe(USDT.address);
    expect(book.asks.map((l) => l.amount)).toEqual(['0.99', '0.98']);
    expect(book.bids).toEqual([
      { price: '59000', amount: '1' },
      { price: '58000', amount: '1' },
    ]);
    // 60,000 / 0.99 = 60606.06…, rounded up against the taker to 12 significant digits.
    expect(book.asks[0]!.price).toBe('60606.0606061');
    const asks = summarizeLevels(book.asks, 8, 18);
    expect(asks.base).toBe((197n * e8) / 100n);
    expect(asks.quoteCeil).toBeGreaterThanOrEqual(120_000n * e18);
  });
});
