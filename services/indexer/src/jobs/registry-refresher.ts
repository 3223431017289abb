/**
 * Keeps the chain's pair registry and the tracked pairs (registry + resolved ladders):
 * refreshed at start, every `refreshMs`, and whenever the node connection comes back (the
 * node may have restarted on a new chain). Each refresh reads the helper and the tokens at
 * the newest head, probes prices for the default bid ladders, writes `pmm:{<id>}:pairs` and
 * announces it. Refreshes are single-flight: concurrent callers share one.
 */
import type { Logger } from '@pmm/core';
import type { PairRegistry } from '@pmm/protocol';
import type { QuoteContext, TrackedPairs } from '../chain/block-quotes';
import type { BlockHead } from '../chain/block-source';
import type { RpcTransport } from '../chain/json-rpc';
import { probePrices } from '../chain/ladder-probe';
import { readPairRegistry } from '../chain/pair-registry-reader';
import { askLadder, needsBidProbe, resolveLadder, type LadderConfig } from '../domain/ladder';
import type { IndexerMetrics } from '../metrics';
import type { RegistryStore } from '../store/registry-store';

export interface RegistryRefresherDeps {
  /** Node connection (counted as purpose "registry" by the caller). */
  rpc: RpcTransport;
  latestHead: () => BlockHead | undefined;
  /** The periodic refresh is skipped while the node is down (the next block refreshes). */
  nodeUp: () => boolean;
  ctx: QuoteContext;
  multicall3?: string;
  ladder: LadderConfig;
  store: RegistryStore;
  refreshMs: number;
  timeoutMs: number;
  metrics: IndexerMetrics;
  logger: Logger;
}

export interface RegistryRefresher {
  /** The tracked pairs, refreshing first when there are none yet (or they were invalidated). */
  ensure(): Promise<TrackedPairs>;
  /** Refreshes now (joins a refresh in flight). */
  refresh(reason: string): Promise<TrackedPairs>;
  /** Forgets the tracked pairs (the node changed); the next ensure() refreshes. */
  invalidate(): void;
  /** Rewrites the last registry to Redis (after Redis lost its data). */
  rewrite(): Promise<void>;
  current(): { registry: PairRegistry; tracked: TrackedPairs } | undefined;
  /** Starts the periodic refresh. */
  start(): void;
  stop(): void;
}

export function createRegistryRefresher(deps: RegistryRefresherDeps): RegistryRefresher {
  const log = deps.logger;
  let state: { registry: PairRegistry; tracked: TrackedPairs } | undefined;
  let inFlight: Promise<TrackedPairs> | undefined;
  let timer: NodeJS.Timeout | undefined;

  const load = async (reason: string): Promise<TrackedPairs> => {
    const head = deps.latestHead();
    if (!head) throw new Error('no block seen yet');
    const batch = { multicall3: deps.multicall3, timeoutMs: deps.timeoutMs };
    let registry: PairRegistry;
    try {
      registry = await readPairRegistry(deps.rpc, {
        chainId: deps.ctx.chainId,
        helper: deps.ctx.helper,
        blockNumber: head.number,
        logger: log,
        ...batch,
      });
      const quote = registry.quoteToken;
      const probeRequests = registry.baseTokens
        .filter((base) => needsBidProbe(deps.ladder, base))
        .map((base) => ({ base, askNotional: askLadder(deps.ladder, base, quote)[0] }));
      const probes =
        probeRequests.length > 0 ? await probePrices(deps.rpc, deps.ctx, quote, probeRequests, head, batch) : new Map();
      const tracked: TrackedPairs = {
        quote,
        pairs: registry.baseTokens.map((base) => ({
          base,
          ladder: resolveLadder(deps.ladder, base, quote, probes.get(base.address)),
        })),
      };
      const previous = state;
      state = { registry, tracked };
      deps.metrics.pairs.set(tracked.pairs.length);
      deps.metrics.registryRefreshes.inc({ result: 'ok' });
      const changed =
        !previous ||
        previous.registry.quoteToken.address !== quote.address ||
        previous.registry.baseTokens.map((b) => b.address).join() !== registry.baseTokens.map((b) => b.address).join();
      // A change of the pair list is a state change (info); a routine refresh is not.
      log.log(changed ? 'info' : 'debug', 'pair registry refreshed', {
        reason,
        block: head.number,
        quote: quote.symbol,
        pairs: registry.baseTokens.map((b) => b.symbol),
      });
    } catch (err) {
      deps.metrics.registryRefreshes.inc({ result: 'error' });
      throw err;
    }
    try {
      await deps.store.write(registry);
    } catch (err) {
      // The tracked pairs are still good for computing books; the write is retried at the next refresh.
      log.warn('pair registry not written to redis', { error: err instanceof Error ? err.message : String(err) });
    }
    return state.tracked;
  };

  const refresh = (reason: string): Promise<TrackedPairs> => {
    inFlight ??= load(reason).finally(() => (inFlight = undefined));
    return inFlight;
  };

  return {
    ensure: () => (state ? Promise.resolve(state.tracked) : refresh('first use')),
    refresh,
    invalidate() {
      state = undefined;
    },
    async rewrite() {
      if (state) await deps.store.write(state.registry);
    },
    current: () => state,
    start() {
      if (timer) return;
      timer = setInterval(() => {
        if (!deps.nodeUp()) return;
        refresh('periodic').catch((err: unknown) =>
          log.warn('pair registry refresh failed', { error: err instanceof Error ? err.message : String(err) }),
        );
      }, deps.refreshMs);
      timer.unref();
    },
    stop() {
      if (timer) clearInterval(timer);
      timer = undefined;
    },
  };
}
