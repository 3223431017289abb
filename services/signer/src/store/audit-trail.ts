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
import {
  AUDIT_ENTRY_FIELD,
  DAY_MS,
  auditDay,
  auditRecordJson,
  type AuditRecord,
  type RedisClient,
  type RedisKeys,
} from '@pmm/core';

/** What the sign path needs: resolves once the record is stored, rejects when it is not. */
export interface AuditSink {
  record(record: AuditRecord): Promise<void>;
}

/**
 * Most entry ids indexed under one signature. Identical requests in one second share a signature; past this many, later ones are still in
 * the stream but not indexed, so that a flood of one request keeps each write O(1).
 */
export const MAX_INDEXED_IDS = 32;

/** Most records in one script call: bounds how long one call holds Redis. */
export const MAX_BATCH_RECORDS = 64;

// KEYS[1] stream, KEYS[2] signature index of the day.
// ARGV[1] MINID cutoff, ARGV[2] index expiry (Unix ms), ARGV[3] field, then per record its
// signature and its JSON. Returns the entry ids, in order.
const APPEND_LUA = `
local ids = {}
for i = 4, #ARGV, 2 do
  local id = redis.call('XADD', KEYS[1], 'MINID', ARGV[1], '*', ARGV[3], ARGV[i + 1])
  if redis.call('HSETNX', KEYS[2], ARGV[i], id) == 0 then
    local prev = redis.call('HGET', KEYS[2], ARGV[i])
    local _, spaces = string.gsub(prev, ' ', ' ')
    if spaces + 1 < ${MAX_INDEXED_IDS} then redis.call('HSET', KEYS[2], ARGV[i], prev .. ' ' .. id) end
  end
  ids[#ids + 1] = id
end
redis.call('PEXPIREAT', KEYS[2], ARGV[2])
return ids
`;

const COMMAND = 'pmmAuditAppendBatch';

type AppendCommand = (stream: string, index: string, ...args: string[]) => Promise<string[]>;

export interface RedisAuditTrailOptions {
  /** A fail-fast command connection. */
  redis: RedisClient;
  keys: RedisKeys;
  /** Records older than this are trimmed; a day's signature index expires this long after the day. */
  retentionMs: number;
  /** Clock (Unix ms) for the trim cutoff; default Date.now. */
  now?: () => number;
}

/** Records waiting for the same script call: one chain, one signature day. */
interface Batch {
  chainId: number;
  day: number;
  /** Per record: signature, JSON. */
  args: string[];
  waiting: { resolve(): void; reject(err: unknown): void }[];
}

/**
 * Records that arrive in the same turn of the event loop are written by one script call per
 * chain and day (at most MAX_BATCH_RECORDS each): measured with `npm run bench gateway`, one
 * call per record cost the signer and Redis more CPU than anything but the signature. Each
 * record's promise still settles only once its own call has, so no signature leaves before
 * its record is stored, and a failed call fails exactly the records it carried.
 */
export class RedisAuditTrail implements AuditSink {
  private readonly append: AppendCommand;
  private batches = new Map<string, Batch>();
  private flushScheduled = false;

  constructor(private readonly opts: RedisAuditTrailOptions) {
    // defineCommand sends EVALSHA and falls back to EVAL once after a Redis restart (NOSCRIPT).
    const client = opts.redis as RedisClient & Record<string, unknown>;
    if (typeof client[COMMAND] !== 'function') opts.redis.defineCommand(COMMAND, { numberOfKeys: 2, lua: APPEND_LUA });
    this.append = (client[COMMAND] as AppendCommand).bind(client);
  }

  record(record: AuditRecord): Promise<void> {
    const day = auditDay(record.timestamp);
    const key = `${record.chainId}:${day}`;
    let batch = this.batches.get(key);
    if (!batch || batch.waiting.length >= MAX_BATCH_RECORDS) {
      if (batch) this.write(batch);
      batch = { chainId: record.chainId, day, args: [], waiting: [] };
      this.batches.set(key, batch);
    }
    batch.args.push(record.signature.toLowerCase(), auditRecordJson(record));
    const stored = new Promise<void>((resolve, reject) => batch.waiting.push({ resolve, reject }));
    if (!this.flushScheduled) {
      this.flushScheduled = true;
      setImmediate(() => this.flush());
    }
    return stored;
  }

  private flush(): void {
    this.flushScheduled = false;
    const batches = this.batches;
    this.batches = new Map();
    for (const batch of batches.values()) this.write(batch);
  }

  private write(batch: Batch): void {
    const { keys, retentionMs } = this.opts;
    const cutoff = Math.max(0, (this.opts.now ?? Date.now)() - retentionMs);
    this.append(
      keys.audit(batch.chainId),
      keys.auditSignatures(batch.chainId, batch.day),
      `${cutoff}-0`,
      String((batch.day + 1) * DAY_MS + retentionMs),
      AUDIT_ENTRY_FIELD,
      ...batch.args,
    ).then(
      () => {
        for (const w of batch.waiting) w.resolve();
      },
      (err: unknown) => {
        for (const w of batch.waiting) w.reject(err);
      },
    );
  }
}
