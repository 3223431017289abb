/**
 * API keys and integrators in Redis (the Redis contract):
 * - `<prefix>:apikey:<sha256 hex of the key>` → JSON ApiKeyRecord (which integrator, keyId, disabled);
 * - `<prefix>:apikeys` → set of every key hash (listing without SCAN);
 * - `<prefix>:integrator:<id>` → JSON IntegratorRecord (whitelist, chains, rate limit, disabled).
 *
 * INVARIANT: a key is never stored in clear, only its SHA-256. A key is 32 random bytes, so a
 * plain (unsalted, fast) hash is enough: there is nothing to brute-force, unlike a password.
 * Lookup by hash is also the comparison: no string compare of secrets happens anywhere.
 */
import { createHash, randomBytes } from 'node:crypto';
import { redisKeys, type RedisClient, encodeAccessUpdate, type AccessUpdate } from '@pmm/core';
import {
  apiKeyRecordProblems,
  integratorRecordProblems,
  isIntegratorId,
  isKeyId,
  MalformedIntegratorError,
  parseIntegratorRecord,
  type ApiKeyRecord,
  type IntegratorRecord,
} from '@pmm/protocol';

/** Prefix of every key the gateway issues: lets scanners (and people) recognise a leaked key. */
export const API_KEY_PREFIX = 'pmm_';
/** Characters of the key shown as its public `keyId` (the prefix plus 8 random characters). */
const KEY_ID_LENGTH = API_KEY_PREFIX.length + 8;

/** An API key record with the integrator it belongs to: what a request is authenticated as. */
export interface ResolvedApiKey {
  key: ApiKeyRecord;
  integrator: IntegratorRecord;
}

/** SHA-256 (hex) of an API key: its Redis identity. */
export function hashApiKey(apiKey: string): string {
  return createHash('sha256').update(apiKey, 'utf8').digest('hex');
}

/** A new API key: `pmm_` + base64url of 32 random bytes (256 bits). */
export function generateApiKey(): string {
  return API_KEY_PREFIX + randomBytes(32).toString('base64url');
}

/**
 * A record that breaks the rules of protocol's integratorRecordProblems/apiKeyRecordProblems;
 * the message lists each problem, values JSON-quoted (no control character reaches a terminal).
 */
export class InvalidRecordError extends Error {
  constructor(
    message: string,
    readonly problems: readonly string[],
  ) {
    super(message);
    this.name = 'InvalidRecordError';
  }
}

/** Throws InvalidRecordError naming every problem of `problems`, if any. */
function assertNoProblems(what: string, problems: string[]): void {
  if (problems.length > 0) throw new InvalidRecordError(`${what}: ${problems.join('; ')}`, problems);
}

/** Throws InvalidRecordError unless the integrator record may be written. */
export function assertValidIntegrator(record: IntegratorRecord): void {
  assertNoProblems(`integrator ${JSON.stringify(record.id)}`, integratorRecordProblems(record));
}

/** Throws InvalidRecordError unless the key record may be written. */
export function assertValidApiKey(record: ApiKeyRecord): void {
  assertNoProblems(`key ${JSON.stringify(record.keyId)}`, apiKeyRecordProblems(record));
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * Parses a stored ApiKeyRecord; undefined when the JSON is not one (treated as no key). The ids
 * must have their shapes: both travel in headers to the signer, so a stored keyId with CR/LF
 * (or anything a header cannot carry) makes the key unusable instead of reaching one.
 */
export function parseApiKeyRecord(text: string | null): ApiKeyRecord | undefined {
  if (text === null) return undefined;
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!isObject(v) || !isIntegratorId(v.integratorId) || !isKeyId(v.keyId)) return undefined;
  return {
    integratorId: v.integratorId,
    keyId: v.keyId,
    createdAt: typeof v.createdAt === 'number' ? v.createdAt : 0,
    disabled: v.disabled === true,
  };
}

/**
 * A stored integrator by the protocol's one parser; undefined when there is none or when it is
 * malformed: the integrator's keys then authenticate nobody (401) rather than with a guessed
 * scope.
 */
export function readIntegratorRecord(id: string, text: string | null): IntegratorRecord | undefined {
  if (text === null) return undefined;
  try {
    return parseIntegratorRecord(id, text);
  } catch (err) {
    if (err instanceof MalformedIntegratorError) return undefined;
    throw err;
  }
}

/** What the key CLI lists: never the key itself (it is not stored), its hash only on request. */
export interface ApiKeyListing {
  hash: string;
  key: ApiKeyRecord;
  integrator?: IntegratorRecord;
}

/** Changes to an integrator; every field optional, absent = unchanged. */
export interface IntegratorUpdate {
  name?: string;
  whitelistAdd?: string[];
  whitelistRemove?: string[];
  chains?: number[];
  rateLimit?: { requests: number; windowSeconds: number };
  /** Signatures per chain and UTC day; 0 means the signer's default (the field is removed). */
  dailySignatureQuota?: number;
  disabled?: boolean;
  /** Per chain: a uint256 decimal string sets the override, `null` removes it. */
  originRate?: Record<string, string | null>;
}

/** Redis access for keys and integrators (used by the gateway and the key CLI). */
export class ApiKeyStore {
  private readonly keys: ReturnType<typeof redisKeys>;

  constructor(
    private readonly redis: RedisClient,
    prefix: string,
  ) {
    this.keys = redisKeys(prefix);
  }

  /**
   * The key and its integrator by the key's hash; undefined when either record is absent or
   * malformed. Disabled flags are returned as stored (the caller decides). Throws when Redis
   * cannot be reached (the caller answers 503, not 401).
   */
  async lookupHash(hash: string): Promise<ResolvedApiKey | undefined> {
    const key = parseApiKeyRecord(await this.redis.get(this.keys.apiKey(hash)));
    if (!key) return undefined;
    const integrator = readIntegratorRecord(
      key.integratorId,
      await this.redis.get(this.keys.integrator(key.integratorId)),
    );
    if (!integrator) return undefined;
    return { key, integrator };
  }

  /** Tells the caches in front of these records (gateway and signer) to drop one. */
  private async announce(update: AccessUpdate): Promise<void> {
    await this.redis.publish(this.keys.accessUpdated(), encodeAccessUpdate(update));
  }

  async getIntegrator(id: string): Promise<IntegratorRecord | undefined> {
    return readIntegratorRecord(id, await this.redis.get(this.keys.integrator(id)));
  }

  /** Writes an integrator record; throws InvalidRecordError (nothing written) when it breaks a rule. */
  async putIntegrator(record: IntegratorRecord): Promise<void> {
    assertValidIntegrator(record);
    await this.redis.set(this.keys.integrator(record.id), JSON.stringify(record));
    await this.announce({ kind: 'integrator', id: record.id });
  }

  /**
   * Issues a new key for an existing integrator. Returns the key in clear: the only moment it
   * exists outside the integrator's hands.
   */
  async issueKey(integratorId: string, now = Date.now()): Promise<{ apiKey: string; record: ApiKeyRecord }> {
    if (!(await this.getIntegrator(integratorId))) throw new Error(`no integrator "${integratorId}"`);
    for (;;) {
      const apiKey = generateApiKey();
      const record: ApiKeyRecord = {
        integratorId,
        keyId: apiKey.slice(0, KEY_ID_LENGTH),
        createdAt: now,
        disabled: false,
      };
      // keyId is how the operator names a key in the CLI, so it must be unique (48 random bits:
      // a clash is practically impossible, but cheap to rule out).
      if ((await this.list()).some((l) => l.key.keyId === record.keyId)) continue;
      await this.storeKey(apiKey, record);
      return { apiKey, record };
    }
  }

  /** Stores a key given in clear (the development key seeded from config) by its hash. */
  async storeKey(apiKey: string, record: ApiKeyRecord): Promise<void> {
    await this.storeKeyHash(hashApiKey(apiKey), record);
  }

  /** Stores a key record by the key's hash (restoring a backup: the key itself is unknown). */
  async storeKeyHash(hash: string, record: ApiKeyRecord): Promise<void> {
    assertValidApiKey(record);
    await this.redis.set(this.keys.apiKey(hash), JSON.stringify(record));
    await this.redis.sadd(this.keys.apiKeyIndex(), hash);
    await this.redis.srem(this.keys.revokedApiKeys(), hash);
    await this.announce({ kind: 'apikey', hash });
  }

  /** Whether the key with this hash was revoked (and not written again since). */
  async isRevoked(hash: string): Promise<boolean> {
    return (await this.redis.sismember(this.keys.revokedApiKeys(), hash)) === 1;
  }

  /** Every key record (with its integrator), oldest first. */
  async list(): Promise<ApiKeyListing[]> {
    const hashes = await this.redis.smembers(this.keys.apiKeyIndex());
    const out: ApiKeyListing[] = [];
    for (const hash of hashes) {
      const key = parseApiKeyRecord(await this.redis.get(this.keys.apiKey(hash)));
      if (!key) continue;
      out.push({ hash, key, integrator: await this.getIntegrator(key.integratorId) });
    }
    return out.sort((a, b) => a.key.createdAt - b.key.createdAt || a.key.keyId.localeCompare(b.key.keyId));
  }

  /** The listing of one key by its public keyId; undefined when there is none. */
  async findByKeyId(keyId: string): Promise<ApiKeyListing | undefined> {
    return (await this.list()).find((l) => l.key.keyId === keyId);
  }

  async setKeyDisabled(keyId: string, disabled: boolean): Promise<ApiKeyRecord> {
    const found = await this.findByKeyId(keyId);
    if (!found) throw new Error(`no key "${keyId}"`);
    const record = { ...found.key, disabled };
    await this.redis.set(this.keys.apiKey(found.hash), JSON.stringify(record));
    await this.announce({ kind: 'apikey', hash: found.hash });
    return record;
  }

  /** Deletes a key for good, leaving its hash among the revoked (nothing seeds it again). */
  async revokeKey(keyId: string): Promise<void> {
    const found = await this.findByKeyId(keyId);
    if (!found) throw new Error(`no key "${keyId}"`);
    await this.revokeHash(found.hash);
  }

  /** Revokes the key with this hash, stored or not (a backup's revocations carried to this Redis). */
  async revokeHash(hash: string): Promise<void> {
    await this.redis.sadd(this.keys.revokedApiKeys(), hash);
    await this.redis.del(this.keys.apiKey(hash));
    await this.redis.srem(this.keys.apiKeyIndex(), hash);
    await this.announce({ kind: 'apikey', hash });
  }

  /** The hashes of every revoked key, sorted (backups carry them, so a restore keeps them revoked). */
  async revokedHashes(): Promise<string[]> {
    return (await this.redis.smembers(this.keys.revokedApiKeys())).sort();
  }

  /** Applies `update` to an integrator and returns the new record. */
  async updateIntegrator(id: string, update: IntegratorUpdate): Promise<IntegratorRecord> {
    const current = await this.getIntegrator(id);
    if (!current) throw new Error(`no integrator "${id}"`);
    const next: IntegratorRecord = { ...current, whitelist: [...current.whitelist], chains: [...current.chains] };
    if (update.name !== undefined) next.name = update.name;
    const remove = new Set((update.whitelistRemove ?? []).map((a) => a.toLowerCase()));
    next.whitelist = [
      ...new Set([...next.whitelist, ...(update.whitelistAdd ?? []).map((a) => a.toLowerCase())]),
    ].filter((a) => !remove.has(a));
    if (update.chains !== undefined) next.chains = [...new Set(update.chains)];
    if (update.rateLimit !== undefined) next.rateLimit = { ...update.rateLimit };
    if (update.dailySignatureQuota === 0) delete next.dailySignatureQuota;
    else if (update.dailySignatureQuota !== undefined) next.dailySignatureQuota = update.dailySignatureQuota;
    if (update.disabled !== undefined) next.disabled = update.disabled;
    if (update.originRate !== undefined) {
      const originRate = { ...(current.originRate ?? {}) };
      for (const [chain, value] of Object.entries(update.originRate)) {
        if (value === null) delete originRate[chain];
        else originRate[chain] = value;
      }
      if (Object.keys(originRate).length > 0) next.originRate = originRate;
      else delete next.originRate;
    }
    await this.putIntegrator(next);
    return next;
  }
}
