/**
 * The subscription side of every cache that Redis pub/sub invalidates: one channel per chain
 * (`<prefix>:{<chainId>}:book-updated`, published by the indexer after each book or registry
 * write), a callback per message, and a callback on every (re)connection of the subscriber,
 * because Redis pub/sub keeps no backlog: what was published while it was away is lost, so a
 * cache must re-read (or drop) everything then. Used by the gateway's BookCache and the
 * signer's PairRegistryCache; each decides what an update means for it.
 *
 * The message is one small JSON object, written by the indexer's book and registry stores with
 * {@link encodeChainUpdate} and read here with {@link decodeChainUpdate}: the one definition of
 * the format.
 */
import type { RedisClient } from '../redis/redis-client';
import type { RedisKeys } from '../redis/redis-keys';

/** What the indexer announces on a chain's channel: a new book, or a new pair registry. */
export interface ChainUpdate {
  type: 'book' | 'pairs';
  chainId: number;
  blockNumber: number;
}

export function encodeChainUpdate(update: ChainUpdate): string {
  return JSON.stringify({ type: update.type, chainId: update.chainId, blockNumber: update.blockNumber });
}

/** The update a message carries, or undefined for anything else (a reader never throws on one). */
export function decodeChainUpdate(message: string): ChainUpdate | undefined {
  let value: unknown;
  try {
    value = JSON.parse(message);
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null) return undefined;
  const { type, chainId, blockNumber } = value as Record<string, unknown>;
  if (type !== 'book' && type !== 'pairs') return undefined;
  if (!Number.isSafeInteger(chainId) || !Number.isSafeInteger(blockNumber)) return undefined;
  return { type, chainId: chainId as number, blockNumber: blockNumber as number };
}

export interface ChainUpdatesOptions {
  /** A dedicated connection in subscriber mode; the caller owns (and closes) it. */
  subscriber: RedisClient;
  keys: RedisKeys;
  chains: readonly number[];
  /** An update announced on a served chain's channel (messages that are not one are ignored). */
  onUpdate(update: ChainUpdate): void;
  /** The subscriber is (again) ready; ioredis has resubscribed by then. */
  onReconnect(): void;
}

export class ChainUpdates {
  private readonly channels: Map<string, number>;
  private readonly handleMessage = (channel: string, message: string) => {
    const chainId = this.channels.get(channel);
    const update = chainId === undefined ? undefined : decodeChainUpdate(message);
    // The channel names the chain: a message claiming another one is not trusted.
    if (update && update.chainId === chainId) this.opts.onUpdate(update);
  };
  private readonly handleReady = () => this.opts.onReconnect();

  constructor(private readonly opts: ChainUpdatesOptions) {
    this.channels = new Map(opts.chains.map((c) => [opts.keys.updates(c), c]));
  }

  /**
   * Listens, then subscribes every chain's channel. Resolves once subscribed; rejects when the
   * SUBSCRIBE fails (a subscriber queues it while Redis is down: callers that must not wait
   * race it against a timer). Once connected, ioredis resubscribes after every reconnect.
   */
  async start(): Promise<void> {
    const { subscriber } = this.opts;
    subscriber.on('message', this.handleMessage);
    subscriber.on('ready', this.handleReady);
    await subscriber.subscribe(...this.channels.keys());
  }

  /** Stops listening and unsubscribes; never rejects. */
  async stop(): Promise<void> {
    const { subscriber } = this.opts;
    subscriber.off('message', this.handleMessage);
    subscriber.off('ready', this.handleReady);
    if (subscriber.status === 'ready') await subscriber.unsubscribe(...this.channels.keys()).catch(() => undefined);
  }
}
