/**
 * The sign against a pair's reference (domain/reference-check.ts), pure: a withheld pair is 503
 * PAIR_UNAVAILABLE with the Retry-After the indexer published, an unknown standing 503
 * SERVICE_UNAVAILABLE, watch mode refuses nothing, and a firm price better for the taker than the
 * band is refused while one worse (the spread) is not. No message says why.
 */
import { ApiError, type PairRegistry } from '@pmm/protocol';
import type { PairBandState } from '@pmm/core';
import { checkFirmPrice, checkStanding, pairOfSign, type ReferenceRefusal } from '../../src/domain/reference-check';
import { StandingUnknown } from '../../src/store/reference-standings';

const BASE = '0x' + 'bb'.repeat(20);
const QUOTE = '0x' + 'cc'.repeat(20);
const state = (over: Partial<PairBandState> = {}): PairBandState => ({
  status: 'in_band',
  mode: 'enforce',
  withheld: false,
  served: true,
  streak: 0,
  since: 1,
  maxDeviationBelowBps: 50,
  maxDeviationAboveBps: 80,
  referencePrice: 3000,
  ...over,
});
const source = (s: PairBandState | undefined | Error) => ({
  standing: () => {
    if (s instanceof Error) throw s;
    return s;
  },
});
const refusals: ReferenceRefusal[] = [];
const refused = (r: ReferenceRefusal) => refusals.push(r);
const thrown = (f: () => unknown): ApiError => {
  try {
    f();
  } catch (err) {
    return err as ApiError;
  }
  throw new Error('did not throw');
};
const registry: PairRegistry = {
  chainId: 8453,
  quoteToken: { address: QUOTE, symbol: 'USDC', decimals: 6 },
  baseTokens: [{ address: BASE, symbol: 'WETH', decimals: 18 }],
  blockNumber: 1,
  refreshedAt: 0,
};

beforeEach(() => (refusals.length = 0));

describe('checkStanding', () => {
  it('behavior: a withheld pair is 503 PAIR_UNAVAILABLE with the published Retry-After, and no reason in the message', () => {
    const err = thrown(() =>
      checkStanding(source(state({ withheld: true, retryAfterSeconds: 6 })), 8453, BASE, refused),
    );
    expect(err).toBeInstanceOf(ApiError);
    expect(err.code).toBe('PAIR_UNAVAILABLE');
    expect(err.status).toBe(503);
    expect(err.headers).toEqual({ 'Retry-After': '6' });
    expect(err.message).not.toMatch(/reference|band|price|stale|feed|oracle/i);
    expect(refusals).toEqual(['withheld']);
  });

  it('behavior: a pair in band is signed; a pair without a reference, or in watch mode, is not checked', () => {
    expect(checkStanding(source(state()), 8453, BASE, refused)).toMatchObject({ status: 'in_band' });
    expect(checkStanding(source(undefined), 8453, BASE, refused)).toBeUndefined();
    expect(checkStanding(source(state({ mode: 'watch', served: false })), 8453, BASE, refused)).toBeUndefined();
    expect(refusals).toEqual([]);
  });

  it('error: no fresh standing for a pair with a reference is 503 SERVICE_UNAVAILABLE (fail closed)', () => {
    const err = thrown(() => checkStanding(source(new StandingUnknown('x')), 8453, BASE, refused));
    expect(err.code).toBe('SERVICE_UNAVAILABLE');
    expect(refusals).toEqual(['unknown']);
  });
});

describe('checkFirmPrice', () => {
  const buy = pairOfSign(registry, { tokenIn: QUOTE, tokenOut: BASE })!;
  const sell = pairOfSign(registry, { tokenIn: BASE, tokenOut: QUOTE })!;
  const usdc = (n: number) => BigInt(Math.round(n * 1e6));
  const weth = (n: number) => BigInt(Math.round(n * 1e6)) * 10n ** 12n;

  it('behavior: buying the base below the reference by more than the band is refused; at the band, or above (the spread), it is not', () => {
    expect(() => checkFirmPrice(state(), buy, usdc(2985.1), weth(1), refused)).not.toThrow(); // −49.7 bps
    expect(() => checkFirmPrice(state(), buy, usdc(3100), weth(1), refused)).not.toThrow();
    expect(thrown(() => checkFirmPrice(state(), buy, usdc(2984), weth(1), refused)).code).toBe('PAIR_UNAVAILABLE');
    expect(refusals).toEqual(['firm_price']);
  });

  it('behavior: selling the base above the reference by more than the band is refused; below it is not', () => {
    expect(() => checkFirmPrice(state(), sell, weth(1), usdc(3023.9), refused)).not.toThrow(); // +79.7 bps
    expect(() => checkFirmPrice(state(), sell, weth(1), usdc(2900), refused)).not.toThrow();
    expect(thrown(() => checkFirmPrice(state(), sell, weth(1), usdc(3024.1), refused)).code).toBe('PAIR_UNAVAILABLE');
  });

  it('behavior: a quote priced in the wrong decimals (×10¹²) is refused on the side it gives away', () => {
    expect(thrown(() => checkFirmPrice(state(), sell, weth(1), usdc(3000) * 10n ** 12n, refused)).code).toBe(
      'PAIR_UNAVAILABLE',
    );
    expect(thrown(() => checkFirmPrice(state(), buy, usdc(3000), weth(1) * 10n ** 12n, refused)).code).toBe(
      'PAIR_UNAVAILABLE',
    );
  });
});
