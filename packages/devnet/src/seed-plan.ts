/**
 * What the devnet puts on each chain: tokens, price curves, router reserves and the test
 * user's balances. Pure data, exported so that tests can predict quotes and orderbooks
 * (together with @pmm/contracts' reference curve) without reading the chain.
 */
import { assertValidCurve, type RouterCurve } from '@pmm/contracts';
import { findChain } from '@pmm/protocol';

/** One token of the plan, with the amounts minted to the router and to the test user (raw units). */
export interface PlannedToken {
  symbol: string;
  name: string;
  decimals: number;
  routerReserve: bigint;
  testUserBalance: bigint;
}

/** A base token with its curve against the chain's quote token. */
export interface PlannedBaseToken extends PlannedToken {
  /** Human mid price: quote tokens per base token. */
  midPrice: bigint;
  curve: RouterCurve;
  /** The first answer of the pair's reference feed: `midPrice` with REFERENCE_FEED_DECIMALS decimals. */
  referenceAnswer: bigint;
}

/** Decimals of every devnet reference feed: those of Chainlink's USD feeds. */
export const REFERENCE_FEED_DECIMALS = 8;

export interface SeedPlan {
  chainId: number;
  quoteToken: PlannedToken;
  /** In deployment order (WETH then WBTC). */
  baseTokens: PlannedBaseToken[];
  /** Seconds a signed swap stays valid on the router. */
  validitySeconds: number;
  /** Native balance given to apiSigner, quoter and testUser (wei). */
  nativeBalance: bigint;
}

/**
 * Every chain gets the same validity, the router's constructor parameter: the reference router's.
 * A test that waits for signatures' windows to pass deploys a shorter one (startDevnet's
 * `validitySeconds`).
 */
export const DEVNET_VALIDITY_SECONDS = 60;

const pow10 = (n: number): bigint => 10n ** BigInt(n);

interface BaseSpec {
  symbol: string;
  name: string;
  decimals: number;
  midPrice: bigint;
  /** Cumulative tier depths in whole base tokens. */
  depths: bigint[];
  spreadsPpm: bigint[];
  routerReserve: bigint;
  testUserBalance: bigint;
}

// INVARIANT: the router's base reserve (150 WETH, 10 WBTC) ends inside the last ask tier
// (50-200 WETH, 5-20 WBTC), so the on-chain ask ladder is cut by reserves, not by the curve:
// the "book stops at the reserves" case is real on every chain.
const BASES: readonly BaseSpec[] = [
  {
    symbol: 'WETH',
    name: 'Wrapped Ether',
    decimals: 18,
    midPrice: 3000n,
    depths: [10n, 50n, 200n],
    spreadsPpm: [500n, 1500n, 4000n],
    routerReserve: 150n,
    testUserBalance: 100n,
  },
  {
    symbol: 'WBTC',
    name: 'Wrapped BTC',
    decimals: 8,
    midPrice: 60000n,
    depths: [1n, 5n, 20n],
    spreadsPpm: [300n, 1000n, 3000n],
    routerReserve: 10n,
    testUserBalance: 5n,
  },
];

const QUOTE_ROUTER_RESERVE = 2_000_000n;
const QUOTE_TEST_USER_BALANCE = 1_000_000n;

/**
 * The seed plan of a chain known to @pmm/protocol's registry (quote token symbol and decimals come
 * from there), its router valid for `validitySeconds`. Throws for an unknown chain id.
 */
export function seedPlan(chainId: number, validitySeconds: number = DEVNET_VALIDITY_SECONDS): SeedPlan {
  if (!Number.isSafeInteger(validitySeconds) || validitySeconds < 1)
    throw new Error(`validity must be a whole number of seconds >= 1, got ${validitySeconds}`);
  const chain = findChain(chainId);
  if (!chain) throw new Error(`chain ${chainId} is not in the @pmm/core chain registry`);
  const qd = chain.quoteToken.decimals;
  const baseTokens = BASES.map((b): PlannedBaseToken => {
    const depths = b.depths.map((d) => d * pow10(b.decimals));
    const curve: RouterCurve = {
      // quote raw per base raw × 1e18 = price × 10^qd × 1e18 / 10^bd (exact for these decimals)
      midPriceX18: (b.midPrice * pow10(qd) * pow10(18)) / pow10(b.decimals),
      askDepths: depths,
      askSpreadsPpm: b.spreadsPpm,
      bidDepths: depths,
      bidSpreadsPpm: b.spreadsPpm,
    };
    assertValidCurve(curve);
    return {
      symbol: b.symbol,
      name: b.name,
      decimals: b.decimals,
      midPrice: b.midPrice,
      curve,
      referenceAnswer: b.midPrice * pow10(REFERENCE_FEED_DECIMALS),
      routerReserve: b.routerReserve * pow10(b.decimals),
      testUserBalance: b.testUserBalance * pow10(b.decimals),
    };
  });
  return {
    chainId,
    quoteToken: {
      symbol: chain.quoteToken.symbol,
      name: `Devnet ${chain.quoteToken.symbol}`,
      decimals: qd,
      routerReserve: QUOTE_ROUTER_RESERVE * pow10(qd),
      testUserBalance: QUOTE_TEST_USER_BALANCE * pow10(qd),
    },
    baseTokens,
    validitySeconds,
    nativeBalance: 1000n * pow10(18),
  };
}
