/**
 * The pair registry of one chain, as the indexer reads it from the helper contract and
 * writes it to `pmm:{<chainId>}:pairs`. Every pair is a base token against the chain's quote token.
 */

export interface TokenInfo {
  /** EIP-55 checksummed address. */
  address: string;
  symbol: string;
  decimals: number;
}

export interface PairRegistry {
  chainId: number;
  quoteToken: TokenInfo;
  baseTokens: TokenInfo[];
  /** Block at which the registry was read. */
  blockNumber: number;
  /** Unix milliseconds of the refresh. */
  refreshedAt: number;
}
