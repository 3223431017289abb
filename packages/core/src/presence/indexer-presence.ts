/**
 * Indexer presence: every indexer replica announces, once a second, that it runs and what it
 * sees (node connection, head block), under a key of its own with a TTL
 * (`<prefix>:{<chainId>}:indexer:<replica>`), so that a replica that dies disappears by
 * itself within {@link PRESENCE_TTL_MS}. The ids are also kept in a sorted set per chain
 * (`<prefix>:{<chainId>}:indexers`, score = expiry) so a reader finds them without SCAN, which a
 * Cluster would have to run on every node; the chain's hash tag keeps both in one slot, so one
 * MULTI writes them and one MGET reads them. The indexer writes it, the gateway's operator
 * console reads it: this file is the one definition of the record.
 *
 * Nothing secret is in it: no node URL (a provider's URL often carries its API key in the path,
 * which maskUrlCredentials cannot know), only the transport's kind.
 */
import type { RedisClient } from '../redis/redis-client';
import type { RedisKeys } from '../redis/redis-keys';

export interface IndexerPresence {
  chainId: number;
  /** The replica's id: `<hostname>:<pid>`. */
  replica: string;
  /** Whether its node connection is up. */
  nodeUp: boolean;
  /** The newest head its node announced; null before the first. */
  headBlock: number | null;
  /** How it follows the node. */
  transport: 'websocket' | 'http polling';
  /** Unix milliseconds of the announcement, on the replica's clock. */
  at: number;
}

/** How often a replica announces itself. */
export const PRESENCE_INTERVAL_MS = 1_000;
/** Life of an announcement: a replica missing five in a row is gone. */
export const PRESENCE_TTL_MS = 5_000;

/** Writes the replica's presence (its key with a TTL, and its id in the chain's index). */
export async function announcePresence(
  redis: RedisClient,
  keys: RedisKeys,
  presence: IndexerPresence,
  ttlMs = PRESENCE_TTL_MS,
): Promise<void> {
  const index = keys.indexerPresenceIndex(presence.chainId);
  const now = Date.now();
  const result = await redis
    .multi()
    .set(keys.indexerPresence(presence.chainId, presence.replica), JSON.stringify(presence), 'PX', ttlMs)
    .zadd(index, now + ttlMs, presence.replica)
    // Ids whose key has expired (replicas gone without withdrawing) leave the index here.
    .zremrangebyscore(index, '-inf', now)
    // The index goes too when the chain's last replica is gone (never before the default
    // announcement of another replica could).
    .pexpire(index, Math.max(ttlMs, PRESENCE_TTL_MS))
    .exec();
  const failed = result?.find(([err]) => err);
  if (!result || failed) throw failed?.[0] ?? new Error('presence write aborted');
}

/** Removes the replica's presence at once (a clean stop). */
export async function withdrawPresence(
  redis: RedisClient,
  keys: RedisKeys,
  chainId: number,
  replica: string,
): Promise<void> {
  await redis
    .multi()
    .del(keys.indexerPresence(chainId, replica))
    .zrem(keys.indexerPresenceIndex(chainId), replica)
    .exec();
}

/** The record of a stored announcement, or undefined for anything malformed (a reader never throws on one). */
export function parseIndexerPresence(json: string): IndexerPresence | undefined {
  let v: unknown;
  try {
    v = JSON.parse(json);
  } catch {
    return undefined;
  }
  if (typeof v !== 'object' || v === null) return undefined;
  const { chainId, replica, nodeUp, headBlock, transport, at } = v as Record<string, unknown>;
  if (!Number.isSafeInteger(chainId) || typeof replica !== 'string' || typeof nodeUp !== 'boolean') return undefined;
  if (headBlock !== null && !Number.isSafeInteger(headBlock)) return undefined;
  if (transport !== 'websocket' && transport !== 'http polling') return undefined;
  if (!Number.isSafeInteger(at)) return undefined;
  return {
    chainId: chainId as number,
    replica,
    nodeUp,
    headBlock: headBlock as number | null,
    transport,
    at: at as number,
  };
}

/** The chain's live replicas, by id. */
export async function readPresence(redis: RedisClient, keys: RedisKeys, chainId: number): Promise<IndexerPresence[]> {
  const replicas = await redis.zrange(keys.indexerPresenceIndex(chainId), 0, -1);
  if (replicas.length === 0) return [];
  const values = await redis.mget(replicas.map((r) => keys.indexerPresence(chainId, r)));
  const found: IndexerPresence[] = [];
  for (const value of values) {
    const presence = value === null ? undefined : parseIndexerPresence(value);
    if (presence) found.push(presence);
  }
  return found.sort((a, b) => a.replica.localeCompare(b.replica));
}
