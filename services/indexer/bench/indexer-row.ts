/**
 * One row of the indexer's benches (indexer.bench.ts): an indexer in this process on the bench's
 * Redis under a prefix of its own, following the devnet chain until `samples` books are written
 * (the first, which also loads the registry, not counted), then stopped. `chain` is the chains
 * setting's entry of the chain (its references, when the row has them); `env`: more settings.
 */
import { createLogger } from '@pmm/core';
import { loadIndexerConfig, startIndexer, type BlockEvent } from '@pmm/indexer';
import type { ChainStack } from '@pmm/devnet';
import type { TrackedPairs } from '../src/chain/block-quotes';

export interface RowSettings {
  redisUrl: string;
  prefix: string;
  samples: number;
  blockIntervalMs: number;
  callGas: number;
  maxAnswerBytes: number;
  /** Each pair's reference (the chains setting's `references`), when the row has them. */
  references?: Record<string, { feed: string }>;
  env?: Record<string, string>;
}

export interface RowResult {
  /** Every block event after the first book. */
  events: BlockEvent[];
  /** What the indexer tracked at the end (for the node-alone measure). */
  tracked: TrackedPairs | undefined;
}

export async function runIndexerRow(c: ChainStack, s: RowSettings): Promise<RowResult> {
  const events: BlockEvent[] = [];
  let resolveDone!: () => void;
  const done = new Promise<void>((r) => (resolveDone = r));
  const entry = {
    chainId: 8453,
    rpcUrl: c.rpcUrl,
    wsUrl: c.wsUrl,
    contracts: c.contracts,
    ...(s.references ? { references: s.references } : {}),
  };
  const config = loadIndexerConfig({
    env: {
      CHAIN_ID: '8453',
      CHAINS: JSON.stringify({ 8453: entry }),
      QUOTER_KEY: c.quoter.privateKey,
      REDIS_URL: s.redisUrl,
      REDIS_KEY_PREFIX: s.prefix,
      PORT: '0',
      RPC_TIMEOUT_MS: '10000',
      BOOK_TTL_MS: '30000',
      CALL_GAS: String(s.callGas),
      MAX_RPC_ANSWER_BYTES: String(s.maxAnswerBytes),
      ...s.env,
    },
    file: {},
  });
  let first = true;
  const ix = await startIndexer(config, {
    logger: createLogger({ service: 'indexer', level: 'error' }),
    defaultMetrics: false,
    onBlock: (e) => {
      // The first block also loads the registry: not a steady-state sample.
      if (e.outcome === 'written' && first) {
        first = false;
        return;
      }
      events.push(e);
      if (events.filter((x) => x.outcome === 'written').length >= s.samples) resolveDone();
    },
  });
  // A row whose books are never written (e.g. the call out of gas) ends with what it has.
  const giveUp = setTimeout(resolveDone, s.samples * s.blockIntervalMs * 3 + 30_000);
  await done;
  clearTimeout(giveUp);
  const tracked = ix.registry.current()?.tracked;
  await ix.stop();
  return { events, tracked };
}
