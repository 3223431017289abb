/**
 * The subscription side of every cache that Redis pub/sub invalidates: one channel per chain
 * (`<prefix>:{<chainId>}:book-updated`, published by the indexer after each book or registry
 * write), a callback per message, and a callback on every (re)connection of the subscriber,
 * because Redis pub/sub keeps no backlog: what was published while it was away is lost, so a
 * cache must re-read (or drop) everything then. Used by the gateway's BookCache and the
 * signer's PairRegistryCache; each decides what a message means for it.
 */
import type { RedisClient } from './redis-client';
import type { RedisKeys } from './redis-keys';

export interface ChainUpdatesOptions {
  /** A dedicated connection in subscriber mode; the caller owns (and closes) it. */
  subscriber: RedisClient;
  keys: RedisKeys;
  chains: readonly number[];
  /** A message published on a chain's channel. */
  onMessage(chainId: number, message: string): void;
  /** The subscriber is (again) ready; ioredis has resubscribed by then. */
  onReconnect(): void;
}

export class ChainUpdates {
  private readonly channels: Map<string, number>;
  private readonly handleMessage = (channel: string, message: string) => {
    const chainId = this.channels.get(channel);
    if (chainId !== undefined) this.opts.onMessage(chainId, message);
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
