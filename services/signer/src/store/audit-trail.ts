/**
 * The audit trail's writer: one record per signature, written before the signature is returned.
 *
 * Layout (per chain, one hash tag, so one atomic script even on a Redis Cluster):
 * - `pmm:{<id>}:audit` — a Stream, one entry per record (one field, core's AuditRecord as JSON); each
 *   write trims entries older than the retention (`XADD … MINID <now − retention>`);
 * - `pmm:{<id>}:audit-sig:<day>` — a hash, signature → the ids of the entries carrying it
 *   (space-separated; usually one, but the same quote signed twice in one second gives the same
 *   signature; at most MAX_INDEXED_IDS), for the signatures whose signed timestamp falls on Unix day `<day>`. A swap's
 *   calldata holds both the signature and that timestamp, so `audit tx` finds its hash at once.
 *   The hash expires a retention after its day ends, so the index is bounded like the stream.
 *
 * INVARIANT: the stream entry and its index entry are written by one Lua script: both or neither.
 * Durability is the deployment's Redis persistence (AOF); the trail adds no other copy.
 */
import { AUDIT_ENTRY_FIELD, auditRecordJson, type AuditRecord, type RedisClient, type RedisKeys } from '@pmm/core';

/** What the sign path needs: resolves once the record is stored, rejects when it is not. */
export interface AuditSink {
  record(record: AuditRecord): Promise<void>;
}

export const DAY_MS = 86_400_000;

/** The Unix day of a signed timestamp (seconds): which signature index holds it. */
export function auditDay(timestampSeconds: number): number {
  return Math.floor(timestampSeconds / 86_400);
}

/**
 * Most entry ids indexed under one signature. Identical requests in one second share a signature; past this many, later ones are still in
 * the stream but not indexed, so that a flood of one request keeps each write O(1).
 */
export const MAX_INDEXED_IDS = 32;

// KEYS[1] stream, KEYS[2] signature index of the day.
// ARGV[1] MINID cutoff, ARGV[2] index expiry (Unix ms), ARGV[3] signature, ARGV[4] field, ARGV[5] record.
const APPEND_LUA = `
local id = redis.call('XADD', KEYS[1], 'MINID', ARGV[1], '*', ARGV[4], ARGV[5])
if redis.call('HSETNX', KEYS[2], ARGV[3], id) == 0 then
  local prev = redis.call('HGET', KEYS[2], ARGV[3])
  local _, spaces = string.gsub(prev, ' ', ' ')
  if spaces + 1 < ${MAX_INDEXED_IDS} then redis.call('HSET', KEYS[2], ARGV[3], prev .. ' ' .. id) end
end
redis.call('PEXPIREAT', KEYS[2], ARGV[2])
return id
`;

const COMMAND = 'pmmAuditAppend';

type AppendCommand = (
  stream: string,
  index: string,
  minId: string,
  expireAt: string,
  signature: string,
  field: string,
  record: string,
) => Promise<string>;

export interface RedisAuditTrailOptions {
  /** A fail-fast command connection (best with auto-pipelining: many small concurrent writes). */
  redis: RedisClient;
  keys: RedisKeys;
  /** Records older than this are trimmed; a day's signature index expires this long after the day. */
  retentionMs: number;
  /** Clock (Unix ms) for the trim cutoff; default Date.now. */
  now?: () => number;
}

export class RedisAuditTrail implements AuditSink {
  private readonly append: AppendCommand;

  constructor(private readonly opts: RedisAuditTrailOptions) {
    // defineCommand sends EVALSHA and falls back to EVAL once after a Redis restart (NOSCRIPT).
    const client = opts.redis as RedisClient & Record<string, unknown>;
    if (typeof client[COMMAND] !== 'function') opts.redis.defineCommand(COMMAND, { numberOfKeys: 2, lua: APPEND_LUA });
    this.append = (client[COMMAND] as AppendCommand).bind(client);
  }

  async record(record: AuditRecord): Promise<void> {
    const { keys, retentionMs } = this.opts;
    const cutoff = Math.max(0, (this.opts.now ?? Date.now)() - retentionMs);
    const day = auditDay(record.timestamp);
    const signature = record.signature.toLowerCase();
    await this.append(
      keys.audit(record.chainId),
      keys.auditSignatures(record.chainId, day),
      `${cutoff}-0`,
      String((day + 1) * DAY_MS + retentionMs),
      signature,
      AUDIT_ENTRY_FIELD,
      auditRecordJson(record),
    );
  }
}
