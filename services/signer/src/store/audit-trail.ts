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
 * - `pmm:{<id>}:audit-quota:<day>` — a hash, integrator id → records of that day on the chain,
 *   when the integrator has a daily quota: a record past it is refused (QuotaExceededError) and
 *   nothing of it is written. It expires a day after its day ends.
 *
 * INVARIANT: the stream entry and its index entry are written by one Lua script: both or neither.
 * INVARIANT: a record's promise resolves only once core's DurableWrites confirmed it durable
 * (fsynced by every master, or acknowledged by replicas): a signature an integrator holds has
 * a record that survives a Redis crash or fail-over. Unconfirmed, it rejects (the sign answer is 503).
 */
import {
  AUDIT_ENTRY_FIELD,
  DAY_MS,
  auditDay,
  auditRecordJson,
  commandsDir,
  luaCommand,
  type DurableWrites,
  type AuditRecord,
  type RedisClient,
  type RedisKeys,
} from '@pmm/core';

/**
 * What the sign path needs: resolves once the record is stored, rejects when it is not:
 * QuotaExceededError when the integrator's `quota` records of the day on the chain are spent
 * (0: no quota), another error when the write failed.
 */
export interface AuditSink {
  record(record: AuditRecord, quota?: number): Promise<void>;
}

/** The integrator's daily quota of signatures on the record's chain is spent: nothing was written. */
export class QuotaExceededError extends Error {
  constructor(readonly quota: number) {
    super(`daily signature quota of ${quota} reached`);
  }
}

/**
 * Most entry ids indexed under one signature. Identical requests in one second share a signature; past this many, later ones are still in
 * the stream but not indexed, so that a flood of one request keeps each write O(1).
 */
export const MAX_INDEXED_IDS = 32;

/** Most records in one script call: bounds how long one call holds Redis. */
export const MAX_BATCH_RECORDS = 64;

/** The batch append (commands/pmmAuditAppendBatch.lua): stream entries and their index, atomically. */
const COMMANDS = commandsDir(__dirname, 2);

type AppendCommand = (...keysThenArgs: (string | number)[]) => Promise<(string | number)[]>;

export interface RedisAuditTrailOptions {
  keys: RedisKeys;
  /** Records older than this are trimmed; a day's signature index expires this long after the day. */
  retentionMs: number;
  /**
   * Writes each script call on one of its connections (fail-fast command connections) and
   * confirms it durable before its records' promises resolve.
   */
  durability: DurableWrites;
  /** Clock (Unix ms) for the trim cutoff; default Date.now. */
  now?: () => number;
}

/** Records waiting for the same script call: one chain, one signature day. */
interface Batch {
  chainId: number;
  day: number;
  /** Per record: signature, JSON, integrator id, quota. */
  args: string[];
  waiting: { quota: number; resolve(): void; reject(err: unknown): void }[];
}

/**
 * Records that arrive in the same turn of the event loop are written by one script call per
 * chain and day (at most MAX_BATCH_RECORDS each): measured with `npm run bench gateway`, one
 * call per record cost the signer and Redis more CPU than anything but the signature. Each
 * record's promise still settles only once its own call has, so no signature leaves before
 * its record is stored, and a failed call fails exactly the records it carried.
 */
export class RedisAuditTrail implements AuditSink {
  /** The script, on each connection the durability layer may write on. */
  private readonly append: Map<RedisClient, AppendCommand>;
  private batches = new Map<string, Batch>();
  private flushScheduled = false;

  constructor(private readonly opts: RedisAuditTrailOptions) {
    this.append = new Map(
      opts.durability.lanes.map((lane) => [
        lane,
        luaCommand<(string | number)[]>(lane, COMMANDS, 'pmmAuditAppendBatch', 3),
      ]),
    );
  }

  record(record: AuditRecord, quota = 0): Promise<void> {
    const day = auditDay(record.timestamp);
    const key = `${record.chainId}:${day}`;
    let batch = this.batches.get(key);
    if (!batch || batch.waiting.length >= MAX_BATCH_RECORDS) {
      if (batch) this.write(batch);
      batch = { chainId: record.chainId, day, args: [], waiting: [] };
      this.batches.set(key, batch);
    }
    batch.args.push(record.signature.toLowerCase(), auditRecordJson(record), record.integratorId, String(quota));
    const stored = new Promise<void>((resolve, reject) => batch.waiting.push({ quota, resolve, reject }));
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
    const { keys, retentionMs, durability } = this.opts;
    const cutoff = Math.max(0, (this.opts.now ?? Date.now)() - retentionMs);
    durability
      .run((redis) =>
        this.append.get(redis)!(
          keys.audit(batch.chainId),
          keys.auditSignatures(batch.chainId, batch.day),
          keys.auditQuota(batch.chainId, batch.day),
          `${cutoff}-0`,
          String((batch.day + 1) * DAY_MS + retentionMs),
          AUDIT_ENTRY_FIELD,
          MAX_INDEXED_IDS,
          String((batch.day + 2) * DAY_MS),
          ...batch.args,
        ),
      )
      .then(
        (ids) => {
          batch.waiting.forEach((w, i) => (ids[i] === 0 ? w.reject(new QuotaExceededError(w.quota)) : w.resolve()));
        },
        (err: unknown) => {
          for (const w of batch.waiting) w.reject(err);
        },
      );
  }
}
