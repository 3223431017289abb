/**
 * In-memory copy of each served chain's pair registry (`pmm:{<id>}:pairs`, written by the
 * indexer). The sign path reads it synchronously: no Redis round trip per request.
 *
 * Freshness, three ways:
 * - the indexer publishes `{"type":"pairs",…}` on `pmm:{<id>}:book-updated` after each
 *   registry write: the cache re-reads that chain at once;
 * - after either connection (re)connects, every chain is re-read (messages published while
 *   the subscriber was away are lost: Redis pub/sub has no backlog);
 * - a failed read is retried after {@link RETRY_MS};
 * - a periodic re-read (default 30 s) is the safety net for anything else.
 *
 * INVARIANT: a failed read (Redis down, malformed JSON) keeps the last good registry; only an
 * answer of "no such key" removes it (the chain is then not bootstrapped: 503).
 */
import { ChainUpdates, type ChainUpdate, type Logger, type RedisClient, type RedisKeys } from '@pmm/core';
import { isAddress, isTokenDecimals, type PairRegistry, type TokenInfo } from '@pmm/protocol';

export interface PairRegistryCacheOptions {
  /** Command connection (GET). */
  redis: RedisClient;
  /** Dedicated pub/sub connection; the cache subscribes it and owns its listeners. */
  subscriber: RedisClient;
  keys: RedisKeys;
  chains: readonly number[];
  logger: Logger;
  /** Periodic re-read interval; default 30 000 ms. 0 disables it (tests). */
  refreshIntervalMs?: number;
}

function isTokenInfo(v: unknown): v is TokenInfo {
  const t = v as Partial<TokenInfo> | null;
  return (
    typeof t === 'object' &&
    t !== null &&
    isAddress(t.address) &&
    typeof t.symbol === 'string' &&
    // A range, not just a type: decimals scale every amount the signer reads for this pair.
    isTokenDecimals(t.decimals)
  );
}

/** Checks the shape the sign path relies on; returns a reason or undefined. */
function invalidReason(chainId: number, v: unknown): string | undefined {
  const r = v as Partial<PairRegistry> | null;
  if (typeof r !== 'object' || r === null) return 'not an object';
  if (r.chainId !== chainId) return `chainId ${String(r.chainId)} does not match the key`;
  if (!isTokenInfo(r.quoteToken)) return 'quoteToken is malformed';
  if (!Array.isArray(r.baseTokens) || !r.baseTokens.every(isTokenInfo)) return 'baseTokens is malformed';
  return undefined;
}

/** How long start() waits for the subscription before going on without it. */
const SUBSCRIBE_WAIT_MS = 2_000;
/** Delay before a failed read of one chain is tried again. */
const RETRY_MS = 1_000;

export class PairRegistryCache {
  private readonly registries = new Map<number, PairRegistry>();
  /** Per chain, the number of the latest read started: an older read never overwrites a newer one. */
  private readonly readSeq = new Map<number, number>();
  private readonly updates: ChainUpdates;
  private timer: NodeJS.Timeout | undefined;
  private readonly retries = new Map<number, NodeJS.Timeout>();
  private closed = false;
  private readonly onReady = () => void this.refreshAll();

  constructor(private readonly opts: PairRegistryCacheOptions) {
    this.updates = new ChainUpdates({
      subscriber: opts.subscriber,
      keys: opts.keys,
      chains: opts.chains,
      onUpdate: (update) => this.handleUpdate(update),
      onReconnect: this.onReady,
    });
  }

  /** The registry of a chain, or undefined while the chain has none (not bootstrapped). */
  get(chainId: number): PairRegistry | undefined {
    return this.registries.get(chainId);
  }

  /**
   * Subscribes and reads every chain once. Never rejects: a chain without a registry (or a
   * Redis that is still down) only means 503 for that chain until a later refresh succeeds.
   */
  async start(): Promise<void> {
    const { redis, logger } = this.opts;
    // Every (re)connection re-reads every chain; the command connection matters too: a read
    // attempted before it was ready failed.
    redis.on('ready', this.onReady);
    // A subscriber queues commands while Redis is down: do not let start-up hang on it.
    const subscribed = this.updates.start().then(
      () => true,
      (err: unknown) => {
        logger.warn('pair registry subscribe failed', { error: err instanceof Error ? err.message : String(err) });
        return false;
      },
    );
    const gaveUp = new Promise<boolean>((resolve) => setTimeout(() => resolve(false), SUBSCRIBE_WAIT_MS).unref());
    if (!(await Promise.race([subscribed, gaveUp])))
      logger.warn('pair registry updates not subscribed yet; relying on periodic refresh');
    const every = this.opts.refreshIntervalMs ?? 30_000;
    if (every > 0) {
      this.timer = setInterval(() => void this.refreshAll(), every);
      this.timer.unref();
    }
    await this.refreshAll();
  }

  /** Re-reads every served chain. */
  async refreshAll(): Promise<void> {
    await Promise.all(this.opts.chains.map((chainId) => this.refresh(chainId)));
  }

  /**
   * Re-reads one chain's registry; resolves true when the read succeeded (key present or
   * absent). A Redis failure schedules a retry; malformed content waits for the next update
   * (retrying would only repeat the same error line every second).
   */
  async refresh(chainId: number): Promise<boolean> {
    const result = await this.read(chainId);
    if (result === 'redis-error') this.scheduleRetry(chainId);
    return result === 'ok';
  }

  private scheduleRetry(chainId: number): void {
    if (this.closed || this.retries.has(chainId)) return;
    const t = setTimeout(() => {
      this.retries.delete(chainId);
      void this.refresh(chainId);
    }, RETRY_MS);
    t.unref();
    this.retries.set(chainId, t);
  }

  private async read(chainId: number): Promise<'ok' | 'redis-error' | 'malformed'> {
    const seq = (this.readSeq.get(chainId) ?? 0) + 1;
    this.readSeq.set(chainId, seq);
    const { redis, keys, logger } = this.opts;
    let text: string | null;
    try {
      text = await redis.get(keys.pairs(chainId));
    } catch (err) {
      logger.warn('pair registry read failed', { chainId, error: err instanceof Error ? err.message : String(err) });
      return 'redis-error';
    }
    if (this.readSeq.get(chainId) !== seq) return 'ok'; // a newer read is in flight or done
    if (text === null) {
      if (this.registries.delete(chainId)) logger.warn('pair registry disappeared', { chainId });
      return 'ok';
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = undefined;
    }
    const reason = invalidReason(chainId, parsed);
    if (reason !== undefined) {
      logger.error('pair registry malformed; keeping the previous one', { chainId, reason });
      return 'malformed';
    }
    const registry = parsed as PairRegistry;
    const previous = this.registries.get(chainId);
    this.registries.set(chainId, registry);
    if (previous?.blockNumber !== registry.blockNumber || previous.baseTokens.length !== registry.baseTokens.length) {
      logger.info('pair registry loaded', {
        chainId,
        blockNumber: registry.blockNumber,
        pairs: registry.baseTokens.length,
      });
    }
    return 'ok';
  }

  private handleUpdate({ type, chainId }: ChainUpdate): void {
    if (type === 'pairs') void this.refresh(chainId);
  }

  /** Stops the timer and unsubscribes; does not close the connections (the caller owns them). */
  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    for (const t of this.retries.values()) clearTimeout(t);
    this.retries.clear();
    this.opts.redis.off('ready', this.onReady);
    await this.updates.stop();
  }
}
