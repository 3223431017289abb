/**
 * Indexer configuration for a devnet chain, built through the real loader from environment
 * variables (the same path main.ts takes).
 */
import type { ChainStack } from '@pmm/devnet';
import { loadIndexerConfig, type IndexerConfig } from '../../src/config';
import { REDIS_URL } from './redis';

/**
 * Fast timings for tests: staleness 4 s, heartbeat 0.5 s, reconnects within 1 s, a killed
 * replica's block job taken over after 1.5 s.
 */
export const TEST_TIMINGS: Readonly<Record<string, string>> = {
  BOOK_TTL_MS: '4000',
  HEARTBEAT_MS: '500',
  RPC_TIMEOUT_MS: '1500',
  RECONNECT_MIN_MS: '100',
  RECONNECT_MAX_MS: '1000',
  REGISTRY_REFRESH_MS: '3000',
  JOB_LOCK_MS: '1500',
};

/** A devnet chain's indexer with the test timings, on the shared Redis unless REDIS_URL is overridden. */
export function indexerEnv(
  chain: ChainStack,
  prefix: string,
  overrides: Record<string, string> = {},
): Record<string, string> {
  const { chainId, rpcUrl, wsUrl, contracts } = chain;
  return {
    CHAIN_ID: String(chainId),
    CHAINS: JSON.stringify({ [chainId]: { chainId, rpcUrl, wsUrl, contracts } }),
    QUOTER_KEY: chain.quoter.privateKey,
    REDIS_URL,
    REDIS_KEY_PREFIX: prefix,
    ...TEST_TIMINGS,
    PORT: '0',
    LOG_LEVEL: 'error',
    ...overrides,
  };
}

export function indexerConfig(
  chain: ChainStack,
  prefix: string,
  overrides: Record<string, string> = {},
): IndexerConfig {
  return loadIndexerConfig({ env: indexerEnv(chain, prefix, overrides), file: {} });
}
