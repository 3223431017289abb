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

/**
 * The most decimals a token may have for the service to price it. ERC-20 allows up to 255
 * (a uint8), real tokens use 0 … 24; a registry entry beyond this is a node's or a token's
 * error, and the indexer (which reads it) and the signer (which trusts what Redis holds) both
 * refuse it rather than scale a book or an amount by a wild power of ten.
 */
export const MAX_TOKEN_DECIMALS = 36;

/** True for a decimals value the service accepts: an integer 0 … {@link MAX_TOKEN_DECIMALS}. */
export function isTokenDecimals(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0 && value <= MAX_TOKEN_DECIMALS;
}
