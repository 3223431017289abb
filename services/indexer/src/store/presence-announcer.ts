/**
 * Announces this replica in Redis every PRESENCE_INTERVAL_MS (core's indexer-presence.ts: the
 * record, its key with a TTL), so that the gateway's operator console can show how many
 * replicas follow the chain, whether each reaches its node and which head it sees. A failed
 * write is retried at the next tick (Redis down: the console reads nothing either); a clean
 * stop withdraws the announcement at once.
 */
import {
  PRESENCE_INTERVAL_MS,
  announcePresence,
  withdrawPresence,
  type IndexerPresence,
  type RedisClient,
  type RedisKeys,
} from '@pmm/core';

export interface PresenceAnnouncerOptions {
  redis: RedisClient;
  keys: RedisKeys;
  chainId: number;
  replica: string;
  transport: IndexerPresence['transport'];
  /** What the replica sees now. */
  state(): { nodeUp: boolean; headBlock: number | null };
  intervalMs?: number;
}

export interface PresenceAnnouncer {
  /** Stops announcing and removes the announcement. */
  stop(): Promise<void>;
}

export function startPresenceAnnouncer(opts: PresenceAnnouncerOptions): PresenceAnnouncer {
  const { redis, keys, chainId, replica, transport } = opts;
  const announce = () =>
    announcePresence(redis, keys, { chainId, replica, transport, ...opts.state(), at: Date.now() }).catch(
      () => undefined,
    );
  void announce();
  const timer = setInterval(announce, opts.intervalMs ?? PRESENCE_INTERVAL_MS);
  timer.unref();
  return {
    stop: async () => {
      clearInterval(timer);
      await withdrawPresence(redis, keys, chainId, replica).catch(() => undefined);
    },
  };
}
