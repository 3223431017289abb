/**
 * The chain registry: the single source of truth for which chains the service knows.
 * The JSON schema, the config defaults, the indexer's chain list, the signer's key lookup
 * and the documentation all derive from this table.
 */

/** Addresses of the contracts the service talks to on one chain. */
export interface ChainContracts {
  /** The market maker's router (`swap`, `quote`). */
  router: string;
  /** Read-only helper (`getListedTokens`, `getQuoteToken`, `getReserveBalances`). */
  helper: string;
  /** EIP-712 verifier; the spec fixes one address on every chain. */
  verifier: string;
  /** Multicall3-compatible aggregator; optional (the indexer falls back to a JSON-RPC batch). */
  multicall3?: string;
}

export interface ChainInfo {
  chainId: number;
  name: string;
  quoteToken: { symbol: string; decimals: number };
  /**
   * Known production addresses, used when a deployment config leaves one out. The router,
   * helper and verifier are the market maker's (they come from the operator's config until
   * they are published); Multicall3 is the canonical deployment where it exists.
   */
  contracts: Partial<ChainContracts>;
}

/** Multicall3's canonical address (same on every chain where it was deployed). */
export const CANONICAL_MULTICALL3 = '0xcA11bde05977b3631167028862bE2a173976CA11';

export const DEFAULT_CHAIN_ID = 8453;

export const CHAINS: readonly ChainInfo[] = Object.freeze([
  {
    chainId: 8453,
    name: 'Base',
    quoteToken: { symbol: 'USDC', decimals: 6 },
    contracts: { multicall3: CANONICAL_MULTICALL3 },
  },
  {
    chainId: 56,
    name: 'BNB Smart Chain',
    quoteToken: { symbol: 'USDT', decimals: 18 },
    contracts: { multicall3: CANONICAL_MULTICALL3 },
  },
  // No canonical Multicall3 known here: without one in the config, the indexer uses a JSON-RPC batch.
  { chainId: 4663, name: 'Chain 4663', quoteToken: { symbol: 'USDG', decimals: 6 }, contracts: {} },
]);

export const KNOWN_CHAIN_IDS: readonly number[] = CHAINS.map((c) => c.chainId);

const byId = new Map(CHAINS.map((c) => [c.chainId, c]));

/** The registry entry for a chain id, or undefined when the service does not know it. */
export function findChain(chainId: number): ChainInfo | undefined {
  return byId.get(chainId);
}

/** `0` (and an omitted id, passed as undefined) select the default chain, per the spec. */
export function resolveChainId(chainId: number | undefined): number {
  return chainId === undefined || chainId === 0 ? DEFAULT_CHAIN_ID : chainId;
}
