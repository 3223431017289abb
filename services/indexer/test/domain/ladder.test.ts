import type { TokenInfo } from '@pmm/protocol';
import {
  DEFAULT_ASK_NOTIONALS,
  FALLBACK_BID_AMOUNTS,
  bidAmountsFromNotionals,
  needsBidProbe,
  parseLadderConfig,
  resolveLadder,
  toRawAmounts,
} from '../../src/domain/ladder';

const USDC: TokenInfo = { address: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913', symbol: 'USDC', decimals: 6 };
const WETH: TokenInfo = { address: '0x4200000000000000000000000000000000000006', symbol: 'WETH', decimals: 18 };
const WBTC: TokenInfo = { address: '0x0555E30da8f98308EdB960aa94C0Db47230d2B9c', symbol: 'WBTC', decimals: 8 };

describe('ladder config', () => {
  it('default: 12 geometric quote notionals from 100 to 1,000,000', () => {
    expect(DEFAULT_ASK_NOTIONALS).toHaveLength(12);
    expect(DEFAULT_ASK_NOTIONALS[0]).toBe('100');
    expect(DEFAULT_ASK_NOTIONALS[11]).toBe('1000000');
  });

  it('behavior: entries by address (normalised to lowercase), symbol and default', () => {
    const cfg = parseLadderConfig({
      default: { asks: ['10', '20'] },
      WBTC: { bids: ['0.5', 1, '2'] },
      [WETH.address.toLowerCase()]: { asks: ['1000'] },
    });
    expect(cfg[WETH.address.toLowerCase()]).toEqual({ asks: ['1000'] });
    expect(resolveLadder(cfg, WETH, USDC).asks).toEqual([1000n * 10n ** 6n]);
    // WBTC: asks from default, bids configured (human base units → raw, 8 decimals).
    expect(resolveLadder(cfg, WBTC, USDC)).toEqual({
      asks: [10_000_000n, 20_000_000n],
      bids: [50_000_000n, 100_000_000n, 200_000_000n],
    });
    expect(needsBidProbe(cfg, WBTC)).toBe(false);
    expect(needsBidProbe(cfg, WETH)).toBe(true);
  });

  it.each([
    [[], /must be an object/],
    [{ default: [] }, /default: must be/],
    [{ default: { asks: [] } }, /1\.\.64/],
    [{ default: { asks: ['1', '1'] } }, /strictly increasing/],
    [{ default: { asks: ['2', '1.5'] } }, /strictly increasing/],
    [{ default: { asks: ['-1'] } }, /positive decimal/],
    [{ default: { asks: [1.5] } }, /positive decimal/],
    [{ default: { asks: ['1e3'] } }, /positive decimal/],
    [{ default: { mids: ['1'] } }, /unknown field/],
    [{ '0x4200000000000000000000000000000000000O06': { asks: ['1'] } }, null],
    [
      { '0x833589fcD6eDb6E08f4c7C32D4f71b54bdA02913': { asks: ['1'] } },
      /^0x833589fcD6eDb6E08f4c7C32D4f71b54bdA02913: invalid checksum$/,
    ],
    [{ '0x0000000000000000000000000000000000000000': { asks: ['1'] } }, /^0x0{40}: zero address not allowed$/],
  ])('error: invalid LADDER %j is rejected naming the entry', (value, message) => {
    if (message === null) expect(() => parseLadderConfig(value)).not.toThrow();
    else expect(() => parseLadderConfig(value)).toThrow(message);
  });
});

describe('raw ladders', () => {
  it('behavior: human amounts scale exactly by the token decimals (6, 8, 18)', () => {
    expect(toRawAmounts(['100', '2500.5'], 6)).toEqual([100_000_000n, 2_500_500_000n]);
    expect(toRawAmounts(['0.00000001', '1'], 8)).toEqual([1n, 100_000_000n]);
    expect(toRawAmounts(['100'], 18)).toEqual([100n * 10n ** 18n]);
  });

  it('behavior: digits past the token precision are cut, and zero or repeated points dropped', () => {
    expect(toRawAmounts(['0.0000001', '1.0000019', '1.000002'], 6)).toEqual([1_000_001n, 1_000_002n]);
  });

  it('behavior: bids are the ask notionals converted at the probe price, floored', () => {
    // 100 USDC bought 0.0333 WETH → 3000.3 USDC/WETH.
    const probe = { quoteIn: 100_000_000n, baseOut: 33_330_000_000_000_000n };
    const notionals = toRawAmounts(DEFAULT_ASK_NOTIONALS, 6);
    const bids = bidAmountsFromNotionals(notionals, probe);
    expect(bids).toHaveLength(12);
    expect(bids[0]).toBe(33_330_000_000_000_000n);
    expect(bids[11]).toBe((1_000_000_000_000n * 33_330_000_000_000_000n) / 100_000_000n);
    expect(resolveLadder({}, WETH, USDC, probe).bids).toEqual(bids);
  });

  it('behavior: without a usable probe the bids fall back to the fixed base ladder', () => {
    const expected = toRawAmounts(FALLBACK_BID_AMOUNTS, 8);
    expect(resolveLadder({}, WBTC, USDC).bids).toEqual(expected);
    expect(resolveLadder({}, WBTC, USDC, { quoteIn: 0n, baseOut: 5n }).bids).toEqual(expected);
    expect(resolveLadder({}, WBTC, USDC, { quoteIn: 10n ** 30n, baseOut: 1n }).bids).toEqual(expected);
  });
});
