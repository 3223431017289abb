import { estimateFromBook, type PairOrderbook } from '@pmm/client';

const pair: PairOrderbook = {
  baseToken: '0x00000000000000000000000000000000000000bb',
  quoteToken: '0x00000000000000000000000000000000000000qq'.replace('qq', 'cc'),
  asks: [
    { price: '3000', amount: '1' },
    { price: '3010.5', amount: '2' },
  ],
  bids: [
    { price: '2990', amount: '1' },
    { price: '2980', amount: '2' },
  ],
};
const dec = { baseDecimals: 18, quoteDecimals: 6 };
const USDC = (n: string) => BigInt(Math.round(Number(n) * 1e6));
const ETH = 10n ** 18n;

describe('estimateFromBook', () => {
  it('default: buying walks the asks, a partial level at its own price', () => {
    // 3000 buys the whole first level, 3010.5 buys one third of a token from the second.
    const r = estimateFromBook({ pair, tokenIn: pair.quoteToken, amountIn: USDC('6010.5'), ...dec });
    expect(r).toEqual({ amountOut: ETH + ETH, unfilledIn: 0n });
    const partial = estimateFromBook({ pair, tokenIn: pair.quoteToken, amountIn: USDC('4505.25'), ...dec });
    expect(partial.amountOut).toBe(ETH + ETH / 2n);
  });

  it('default: selling walks the bids', () => {
    const r = estimateFromBook({
      pair,
      tokenIn: pair.baseToken.toUpperCase().replace('0X', '0x'),
      amountIn: 2n * ETH,
      ...dec,
    });
    expect(r).toEqual({ amountOut: USDC('5970'), unfilledIn: 0n });
  });

  it('behavior: the fee is deducted from the output like the router does; unfilled input is reported', () => {
    const r = estimateFromBook({ pair, tokenIn: pair.baseToken, amountIn: 4n * ETH, fee: 100n, ...dec });
    // 2990 + 2*2980 = 8950 USDC gross, 1 ETH left over; 10 bps fee.
    expect(r).toEqual({ amountOut: (USDC('8950') * 99_900n) / 100_000n, unfilledIn: ETH });
  });

  it('error: a token that is not in the pair', () => {
    expect(() => estimateFromBook({ pair, tokenIn: '0x' + '1'.repeat(40), amountIn: 1n, ...dec })).toThrow(
      'not a token of this pair',
    );
  });

  it('behavior: a tiny price written with more than 18 places is read exactly', () => {
    // 12 significant digits of 1.5e-20 USDC per base: the book writes 20+ places
    const tiny: PairOrderbook = { ...pair, asks: [{ price: '0.000000000000000000015', amount: '1000000' }], bids: [] };
    // 1000000 base cost 1.5e-14 USDC, less than one USDC wei: 1 wei buys the whole level
    const r = estimateFromBook({ pair: tiny, tokenIn: pair.quoteToken, amountIn: 1n, ...dec });
    expect(r).toEqual({ amountOut: 1_000_000n * ETH, unfilledIn: 0n });
  });
});
