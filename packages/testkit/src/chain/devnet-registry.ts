/** A devnet chain's pair registry as the indexer writes it, for tests that run no indexer. */
import type { PairRegistry, TokenInfo } from '@pmm/protocol';

export function devnetRegistry(s: { chainId: number; quoteToken: TokenInfo; baseTokens: TokenInfo[] }): PairRegistry {
  return {
    chainId: s.chainId,
    quoteToken: s.quoteToken,
    baseTokens: s.baseTokens,
    blockNumber: 1,
    refreshedAt: Date.now(),
  };
}
