/**
 * The programmatic devnet: one anvil node per chain, deployed and seeded, described by a
 * StackDescription. Used by the CLI (`pnpm devnet`), `npm start`, and testkit's `startSystem()`,
 * which every test and benchmark outside this package starts its chains with.
 */
import { KNOWN_CHAIN_IDS } from '@pmm/protocol';
import { findFreePort } from './free-port';
import { AnvilNode, PortInUseError } from './anvil-node';
import { deployerWallet } from './devnet-keys';
import { startMovingMarket, type MarketControls, type MovingMarket } from './devnet-market';
import type { MovingMarketOptions } from './market-walk';
import { REFERENCE_FEED_DECIMALS, seedPlan } from './seed-plan';
import { setupChain } from './setup-chain';
import { writeStack, type ChainStack, type StackDescription } from './stack';

/** Block periods close to the real chains. */
export const DEFAULT_BLOCK_INTERVAL_MS: Readonly<Record<number, number>> = Object.freeze({
  8453: 2000,
  56: 750,
  4663: 1000,
});
const FALLBACK_BLOCK_INTERVAL_MS = 1000;

/** Ports tried per chain at its first start when the devnet picks them (see startNode). */
const PORT_ATTEMPTS = 4;

export interface StartDevnetOptions {
  /** Chains to start. Default: every chain of the @pmm/core registry (8453, 56, 4663). */
  chains?: number[];
  /** Port per chain id. Default: a free port (`pickPort`), picked again if taken before the node binds it. */
  ports?: Record<number, number>;
  /**
   * How a port is picked. Default findFreePort. A caller that picks ports for its own servers too
   * passes its picker, so that one memory of the ports handed out covers both (free-port.ts).
   */
  pickPort?: () => Promise<number>;
  /**
   * Interval mining period in ms, one value for all chains or one per chain id; 0 means
   * automine (a block per transaction: fastest for tests). Default: DEFAULT_BLOCK_INTERVAL_MS.
   */
  blockIntervalMs?: Record<number, number> | number;
  /** Write the stack JSON to this file once every chain is up. Default: no file. */
  stackFile?: string;
  /** Address the nodes bind; default 127.0.0.1. Use 0.0.0.0 in a container. */
  host?: string;
  /**
   * Host name written into the stack's rpcUrl/wsUrl, i.e. how OTHER processes reach the nodes
   * (e.g. `devnet` in docker compose). Default 127.0.0.1.
   */
  advertisedHost?: string;
  /** Progress lines (never contain keys). Default: silent. */
  log?: (msg: string) => void;
  /**
   * Record every transaction's opcode steps, so that debug_traceTransaction's default tracer
   * (struct logs, the only one some nodes have) answers with them; anvil answers it with no steps
   * otherwise. callTracer and trace_transaction need nothing. Default false: it slows every
   * transaction and keeps the steps in memory.
   */
  stepsTracing?: boolean;
  /**
   * Block gas limit; also what an eth_call may use at most (the node refuses more). Default
   * anvil's 30,000,000. Raised by the indexer bench, whose one call per block for hundreds of
   * pairs needs more.
   */
  blockGasLimit?: number;
  /**
   * A market that moves: each pair's true market takes a seeded random-walk step every block,
   * the maker's curve follows it and the pair's reference feed publishes it (devnet-market.ts).
   * Default: none, a still market and still feeds (tests that predict books need it). Needs
   * interval mining.
   */
  market?: MovingMarketOptions;
  /**
   * Seconds each chain's router accepts a signed swap after its timestamp (the router's
   * validity, a constructor parameter). Default DEVNET_VALIDITY_SECONDS, the reference router's
   * 60: what `npm start` deploys. Shorter for tests that wait for signatures' windows to pass.
   */
  validitySeconds?: number;
}

export interface Devnet {
  readonly stack: StackDescription;
  /** Kills the chain's node (its port refuses connections). */
  stopChain(chainId: number): Promise<void>;
  /** Restarts a stopped chain on the same port, redeploys and reseeds: same addresses, fresh state. */
  startChain(chainId: number): Promise<void>;
  /** SIGSTOP: the node keeps its socket but answers nothing (a hung RPC). */
  pauseChain(chainId: number): void;
  /** SIGCONT after pauseChain. */
  resumeChain(chainId: number): void;
  /** The faults a drill sets on the chain's market (throws when the devnet has no market). */
  market(chainId: number): MarketControls;
  /** Kills every node and waits until they are gone. */
  stop(): Promise<void>;
}

interface ChainSlot {
  chainId: number;
  port: number;
  blockIntervalMs: number;
  node: AnvilNode | undefined;
  description: ChainStack | undefined;
  market: MovingMarket | undefined;
}

function intervalFor(chainId: number, option: StartDevnetOptions['blockIntervalMs']): number {
  const value =
    typeof option === 'number'
      ? option
      : (option?.[chainId] ?? DEFAULT_BLOCK_INTERVAL_MS[chainId] ?? FALLBACK_BLOCK_INTERVAL_MS);
  if (!Number.isSafeInteger(value) || value < 0) throw new Error(`block interval for chain ${chainId} must be >= 0`);
  return value;
}

/**
 * Starts the chains in parallel (spawn, wait for eth_chainId, deploy, seed) and resolves when all
 * are ready. On any failure every node already started is killed before the promise rejects.
 * Nodes are also killed when this process exits, and exit by themselves if it is SIGKILLed.
 */
export async function startDevnet(opts: StartDevnetOptions = {}): Promise<Devnet> {
  const log = opts.log ?? ((): void => undefined);
  const chainIds = opts.chains ?? [...KNOWN_CHAIN_IDS];
  if (new Set(chainIds).size !== chainIds.length) throw new Error('startDevnet: duplicate chain id');

  const pickPort = opts.pickPort ?? findFreePort;
  const slots = new Map<number, ChainSlot>();
  for (const chainId of chainIds) {
    slots.set(chainId, {
      chainId,
      port: opts.ports?.[chainId] ?? (await pickPort()),
      blockIntervalMs: intervalFor(chainId, opts.blockIntervalMs),
      node: undefined,
      description: undefined,
      market: undefined,
    });
  }

  const killAllNow = (): void => {
    for (const slot of slots.values()) slot.node?.killNow();
  };
  process.on('exit', killAllNow);

  // A port picked here was free a moment ago; another process (a parallel test's server, or an
  // outgoing connection's local port) can take it before anvil binds it. At a chain's first
  // start such a port is picked again, a few times. A port the caller gave fails at once, and so
  // does a restart: the stack file already names its port.
  const startNode = async (slot: ChainSlot, firstStart: boolean): Promise<AnvilNode> => {
    for (let attempt = 1; ; attempt++) {
      try {
        return await AnvilNode.start({
          chainId: slot.chainId,
          port: slot.port,
          blockIntervalMs: slot.blockIntervalMs,
          host: opts.host,
          stepsTracing: opts.stepsTracing,
          blockGasLimit: opts.blockGasLimit,
        });
      } catch (err) {
        const picked = opts.ports?.[slot.chainId] === undefined;
        if (!(err instanceof PortInUseError && firstStart && picked && attempt < PORT_ATTEMPTS)) throw err;
        log(`chain ${slot.chainId}: port ${slot.port} was taken before the node bound it; picking another`);
        slot.port = await pickPort();
      }
    }
  };

  const bringUp = async (slot: ChainSlot, firstStart = false): Promise<ChainStack> => {
    const started = Date.now();
    slot.node = await startNode(slot, firstStart);
    const nodeMs = Date.now() - started;
    let description: ChainStack;
    try {
      description = await setupChain({
        chainId: slot.chainId,
        rpcUrl: slot.node.rpcUrl,
        blockIntervalMs: slot.blockIntervalMs,
        validitySeconds: opts.validitySeconds,
      });
    } catch (err) {
      await slot.node.kill();
      throw err;
    }
    if (opts.advertisedHost) {
      // Setup talks to the node over loopback; the stack tells others the advertised name.
      const advertise = (url: string): string => url.replace('//127.0.0.1:', `//${opts.advertisedHost}:`);
      description = { ...description, rpcUrl: advertise(description.rpcUrl), wsUrl: advertise(description.wsUrl) };
    }
    if (opts.market) {
      const plan = seedPlan(slot.chainId);
      slot.market = await startMovingMarket(
        {
          chainId: slot.chainId,
          rpcUrl: slot.node.rpcUrl,
          router: description.contracts.router,
          pairs: plan.baseTokens.map((b, i) => {
            const base = description.baseTokens[i]!.address;
            return {
              base,
              curve: b.curve,
              feed: description.references[base]!.feed,
              feedAnswer: b.referenceAnswer,
              scale: {
                feedDecimals: REFERENCE_FEED_DECIMALS,
                baseDecimals: b.decimals,
                quoteDecimals: plan.quoteToken.decimals,
              },
            };
          }),
          blockIntervalMs: slot.blockIntervalMs,
          owner: deployerWallet(),
        },
        opts.market,
      );
    }
    const blocks = slot.blockIntervalMs === 0 ? 'automine' : `block ${slot.blockIntervalMs} ms`;
    log(
      `chain ${slot.chainId} ready at ${description.rpcUrl} (${blocks}) in ${Date.now() - started} ms ` +
        `(node ${nodeMs} ms, deploy+seed ${Date.now() - started - nodeMs} ms)`,
    );
    return description;
  };

  const stopMarket = async (slot: ChainSlot): Promise<void> => {
    await slot.market?.stop();
    slot.market = undefined;
  };
  const stopAll = async (): Promise<void> => {
    await Promise.all([...slots.values()].map(async (slot) => (await stopMarket(slot), await slot.node?.kill())));
    process.removeListener('exit', killAllNow);
  };

  const ordered = [...slots.values()];
  const results = await Promise.allSettled(ordered.map((slot) => bringUp(slot, true)));
  const stack: StackDescription = { chains: {} };
  for (const [i, result] of results.entries()) {
    const slot = ordered[i];
    if (result.status === 'rejected' || !slot) {
      await stopAll();
      throw result.status === 'rejected' ? result.reason : new Error('internal: slot missing');
    }
    slot.description = result.value;
    stack.chains[String(slot.chainId)] = result.value;
  }
  if (opts.stackFile) writeStack(opts.stackFile, stack);

  const slotOf = (chainId: number): ChainSlot => {
    const slot = slots.get(chainId);
    if (!slot) throw new Error(`chain ${chainId} is not part of this devnet`);
    return slot;
  };
  const runningNode = (chainId: number): AnvilNode => {
    const node = slotOf(chainId).node;
    if (!node?.running) throw new Error(`chain ${chainId} is not running`);
    return node;
  };

  return {
    stack,
    async stopChain(chainId) {
      await stopMarket(slotOf(chainId));
      await slotOf(chainId).node?.kill();
      log(`chain ${chainId} stopped`);
    },
    async startChain(chainId) {
      const slot = slotOf(chainId);
      if (slot.node?.running) throw new Error(`chain ${chainId} is already running`);
      const description = await bringUp(slot);
      // INVARIANT: a restarted chain is indistinguishable in the stack file (same port, same
      // deployer nonce sequence, same derived keys), so readers need not re-read it.
      if (JSON.stringify(description) !== JSON.stringify(slot.description)) {
        throw new Error(`chain ${chainId} came back with a different description`);
      }
    },
    pauseChain(chainId) {
      runningNode(chainId).pause();
      log(`chain ${chainId} paused`);
    },
    resumeChain(chainId) {
      runningNode(chainId).resume();
      log(`chain ${chainId} resumed`);
    },
    market(chainId) {
      const market = slotOf(chainId).market;
      if (!market) throw new Error(`chain ${chainId} has no moving market`);
      return market;
    },
    stop: stopAll,
  };
}
