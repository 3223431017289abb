/**
 * Keeps the chain's pair registry and the tracked pairs (registry + resolved ladders):
 * refreshed at start, every `refreshMs`, and whenever the node connection comes back (the
 * node may have restarted on a new chain). Each refresh reads the helper and the tokens at
 * the newest head, probes prices for the default bid ladders, writes `pmm:{<id>}:pairs` and
 * announces it. Refreshes are single-flight: concurrent callers share one.
 *
 * A registry that differs from the last one accepted (a token listed or delisted, a token's
 * decimals) is believed only when a second read says the same: from the second node when the
 * chain has one (`confirmRpcUrl`, at the same block), else from the same node at the newest
 * head. One answer of one node must not rescale the book by a power of ten or add a pair. Every change,
 * accepted or refused, is logged and counted (`indexer_registry_changes_total`, alerted on).
 */
import type { Logger, ReferenceBand, RpcTransport } from '@pmm/core';
import type { PairRegistry, TokenInfo } from '@pmm/protocol';
import type { QuoteContext, TrackedPairs } from '../chain/block-quotes';
import type { BlockHead } from '../chain/block-source';
import { probePrices } from '../chain/ladder-probe';
import { readPairRegistry } from '../chain/pair-registry-reader';
import { askLadder, needsBidProbe, resolveLadder, type LadderConfig } from '../domain/ladder';
import type { IndexerMetrics } from '../metrics';
import type { RegistryStore } from '../store/registry-store';

export interface RegistryRefresherDeps {
  /** Node connection (counted as purpose "registry" by the caller). */
  rpc: RpcTransport;
  /** A second node that confirms registry changes; absent: the second read goes to `rpc`. */
  confirmRpc?: RpcTransport;
  latestHead: () => BlockHead | undefined;
  /** The periodic refresh is skipped while the node is down (the next block refreshes). */
  nodeUp: () => boolean;
  ctx: QuoteContext;
  multicall3?: string;
  ladder: LadderConfig;
  /** Decimals the chains file pins, by checksummed address. */
  pinnedDecimals?: Readonly<Record<string, number>>;
  /** Each pair's reference feed and band (its own values over the defaults), by base address, lower case. */
  references?: Readonly<Record<string, { feed: string; band: ReferenceBand }>>;
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

/** What a change of the registry is about (the `kind` label). */
type RegistryChange = 'decimals' | 'listing';

const tokenKey = (t: TokenInfo) => `${t.address}/${t.decimals}`;
/** The part of a registry whose change needs confirming: every token's address and decimals. */
const registryKey = (r: PairRegistry) => [r.quoteToken, ...r.baseTokens].map(tokenKey).join(',');

/** How `next` differs from `previous`: decimals when a token of both reads other decimals. */
function changeKind(previous: PairRegistry, next: PairRegistry): RegistryChange {
  const before = new Map([previous.quoteToken, ...previous.baseTokens].map((t) => [t.address, t.decimals]));
  const decimalsChanged = [next.quoteToken, ...next.baseTokens].some(
    (t) => before.has(t.address) && before.get(t.address) !== t.decimals,
  );
  return decimalsChanged ? 'decimals' : 'listing';
}

export function createRegistryRefresher(deps: RegistryRefresherDeps): RegistryRefresher {
  const log = deps.logger;
  let state: { registry: PairRegistry; tracked: TrackedPairs } | undefined;
  /** The last registry accepted; kept across invalidate(), so that a reconnect does not skip the confirmation. */
  let accepted: PairRegistry | undefined;
  let inFlight: Promise<TrackedPairs> | undefined;
  let timer: NodeJS.Timeout | undefined;

  const load = async (reason: string): Promise<TrackedPairs> => {
    const head = deps.latestHead();
    if (!head) throw new Error('no block seen yet');
    const batch = { multicall3: deps.multicall3, timeoutMs: deps.timeoutMs };
    const read = (at: BlockHead, rpc = deps.rpc) =>
      readPairRegistry(rpc, {
        chainId: deps.ctx.chainId,
        helper: deps.ctx.helper,
        block: at,
        pinnedDecimals: deps.pinnedDecimals,
        logger: log,
        ...batch,
      });
    let registry: PairRegistry;
    try {
      registry = await read(head);
      if (accepted && registryKey(accepted) !== registryKey(registry)) {
        const kind = changeKind(accepted, registry);
        const second = deps.confirmRpc ? await read(head, deps.confirmRpc) : await read(deps.latestHead() ?? head);
        const confirmed = registryKey(second) === registryKey(registry);
        deps.metrics.registryChanges.inc({ kind, result: confirmed ? 'accepted' : 'refused' });
        const fields = {
          kind,
          block: head.number,
          before: [accepted.quoteToken, ...accepted.baseTokens].map(tokenKey),
          after: [registry.quoteToken, ...registry.baseTokens].map(tokenKey),
        };
        if (!confirmed) {
          log.error('pair registry change refused: a second read disagrees', fields);
          throw new Error('pair registry change not confirmed by a second read');
        }
        log.warn('pair registry changed (confirmed by a second read)', fields);
      }
      const quote = registry.quoteToken;
      const probeRequests = registry.baseTokens
        .filter((base) => needsBidProbe(deps.ladder, base))
        .map((base) => ({ base, askNotional: askLadder(deps.ladder, base, quote)[0] }));
      const probes =
        probeRequests.length > 0 ? await probePrices(deps.rpc, deps.ctx, quote, probeRequests, head, batch) : new Map();
      const tracked: TrackedPairs = {
        quote,
        pairs: registry.baseTokens.map((base) => {
          const reference = deps.references?.[base.address.toLowerCase()];
          return {
            base,
            ladder: resolveLadder(deps.ladder, base, quote, probes.get(base.address)),
            ...(reference ? { reference } : {}),
          };
        }),
      };
      const previous = state;
      state = { registry, tracked };
      accepted = registry;
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
