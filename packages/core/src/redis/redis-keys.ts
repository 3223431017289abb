/**
 * Redis key names shared by the services (the Redis contract). Per-chain keys carry the
 * chain id as a hash tag (`{8453}`) so that a Redis Cluster keeps one chain's keys together.
 */

export const DEFAULT_KEY_PREFIX = 'pmm';

export function redisKeys(prefix: string = DEFAULT_KEY_PREFIX) {
  return {
    /** string: the exact JSON body of `GET /v2/price` for the chain (written by the indexer). */
    book: (chainId: number) => `${prefix}:{${chainId}}:book`,
    /** string: the chain's pair registry as JSON (written by the indexer). */
    pairs: (chainId: number) => `${prefix}:{${chainId}}:pairs`,
    /** pub/sub channel: announced after each book or registry write. */
    updates: (chainId: number) => `${prefix}:{${chainId}}:book-updated`,
    /** string: an API key's record (which integrator it belongs to), by the key's SHA-256 (hex). */
    apiKey: (sha256Hex: string) => `${prefix}:apikey:${sha256Hex}`,
    /** set: SHA-256 hashes of every API key, so that the key CLI can list them without SCAN. */
    apiKeyIndex: () => `${prefix}:apikeys`,
    /**
     * set: SHA-256 hashes of revoked API keys, so that nothing seeds a revoked key again (the
     * development key at each gateway start); writing the key's record again (an import)
     * removes it from here.
     */
    revokedApiKeys: () => `${prefix}:apikeys:revoked`,
    /** string: an integrator record (whitelist, chains, rate limit, originRate overrides). */
    integrator: (integratorId: string) => `${prefix}:integrator:${integratorId}`,
    /**
     * pub/sub channel: announced by the key store after it writes an API key or an
     * integrator record (access-updates.ts), so that caches drop the entry at once.
     */
    accessUpdated: () => `${prefix}:access-updated`,
    /** counter: requests of one integrator in one rate-limit window. */
    rateLimit: (integratorId: string, windowStart: number) => `${prefix}:rl:${integratorId}:${windowStart}`,
    /** sorted set: the open price streams of one API key (member per stream, score = lease expiry ms). */
    streamSlots: (keyId: string) => `${prefix}:streams:${keyId}`,
    /**
     * stream: the chain's audit trail, one entry per signature returned (written by the signer,
     * trimmed by time to the retention). Same hash tag as the index below: one atomic write.
     */
    audit: (chainId: number) => `${prefix}:{${chainId}}:audit`,
    /**
     * hash: signature (lowercase 0x hex) → the audit entry ids carrying it, for the signatures
     * whose signed timestamp falls on Unix day `day` (what a swap's calldata tells); expires
     * a retention after the day ends.
     */
    auditSignatures: (chainId: number, day: number) => `${prefix}:{${chainId}}:audit-sig:${day}`,
    /** hash: integrator id → signatures recorded on the chain that UTC day (the daily quota). */
    auditQuota: (chainId: number, day: number) => `${prefix}:{${chainId}}:audit-quota:${day}`,
    /**
     * string, TTL: one indexer replica's presence (indexer-presence.ts), rewritten every second
     * by the replica; it expires when the replica is gone.
     */
    indexerPresence: (chainId: number, replica: string) => `${prefix}:{${chainId}}:indexer:${replica}`,
    /** sorted set: the replica ids of the chain's presence keys (score = expiry ms), to find them without SCAN. */
    indexerPresenceIndex: (chainId: number) => `${prefix}:{${chainId}}:indexers`,
    /**
     * sorted set: the best bid and ask of every pair at each block the indexer computed (score =
     * block number; member = JSON, mid-history.ts), trimmed to MIDS_RETENTION_SECONDS: what
     * markouts read instead of an archive node.
     */
    mids: (chainId: number) => `${prefix}:{${chainId}}:mids`,
    /** sorted set: block number of each kept mid record (score = block time, s): the mids' trim by time. */
    midTimes: (chainId: number) => `${prefix}:{${chainId}}:mids:times`,
    /** sorted set: the maker's ledger, the chain's executed swaps (score = block number; member = JSON, ledger-entry.ts). */
    ledger: (chainId: number) => `${prefix}:{${chainId}}:ledger`,
    /**
     * sorted set: the router calls that reverted on the chain (score = block number; member = JSON,
     * ledger-revert.ts), committed and rolled back with the swaps of their blocks.
     */
    ledgerReverts: (chainId: number) => `${prefix}:{${chainId}}:ledger:reverts`,
    /** string: JSON { number, hash } of the last block the ledger holds (it resumes after it). */
    ledgerCursor: (chainId: number) => `${prefix}:{${chainId}}:ledger:cursor`,
    /** hash: block number → hash of the recent blocks the ledger read (a reorg is found against them). */
    ledgerBlocks: (chainId: number) => `${prefix}:{${chainId}}:ledger:blocks`,
    /**
     * hash: the ledger's totals of Unix day `day` (UTC, by block time) per integrator, fields
     * `swaps:<id>` and `notional:<id>` (ledger-day-totals.ts); written with the blocks they count.
     */
    ledgerDay: (chainId: number, day: number) => `${prefix}:{${chainId}}:ledger:day:${day}`,
    /** hash: integrator id → its rolling 60 s markout values (JSON, ledger-rolling-markout.ts). */
    ledgerMarkouts: (chainId: number) => `${prefix}:{${chainId}}:ledger:markout60s`,
    /**
     * hash: the operator's active halts, scope name (halt-scope.ts haltScopeName) → JSON
     * HaltRecord; written by the risk command only. Hash tag `{halts}`: one slot with the log and
     * the ledgers' trips below (one atomic write).
     */
    halts: () => `${prefix}:{halts}:active`,
    /**
     * stream: every operator's halt and resume, and each ledger's trip once an operator lifts it;
     * kept for `risk history` (and the ledgers' limits read the resumes). Written by the risk
     * command only: no ledger can shorten it or forge a resume.
     */
    haltLog: () => `${prefix}:{halts}:log`,
    /**
     * hash: the halts chain `chainId`'s ledger tripped and no operator lifted yet, scope name →
     * JSON HaltRecord with its trip. That ledger may only add a field (HSETNX), never change or
     * remove one; the risk command removes it at the resume (halt-store.ts).
     */
    haltTrips: (chainId: number) => `${prefix}:{halts}:trips:${chainId}`,
    /** pub/sub channel: announced after each change of the halts (the risk command, a ledger's trip). */
    haltsUpdated: () => `${prefix}:halts-updated`,
    /** BullMQ queue prefix for one chain's block jobs (hash tag keeps a queue in one slot). */
    queuePrefix: (chainId: number) => `${prefix}:{${chainId}}:q`,
  };
}

export type RedisKeys = ReturnType<typeof redisKeys>;

/** The side key holding the stored book's block number. */
export function bookBlockKey(bookKey: string): string {
  return `${bookKey}:block`;
}

/** The side key holding the stored book's block hash (the signer pins its firm quotes to it). */
export function bookHashKey(bookKey: string): string {
  return `${bookKey}:hash`;
}

/**
 * The side key holding each pair's standing against its reference at the stored book (core's
 * band-record.ts): written with the book, expiring with it; the signer refuses the pairs it withholds.
 */
export function bookBandKey(bookKey: string): string {
  return `${bookKey}:band`;
}

/**
 * The stream of each pair's transitions in and out of its band (core's band-transition.ts), written
 * in the book's script (same hash tag): history, kept past the book's expiry, trimmed to
 * BAND_LOG_MAX_ENTRIES.
 */
export function bookBandLogKey(bookKey: string): string {
  return `${bookKey}:band:log`;
}
