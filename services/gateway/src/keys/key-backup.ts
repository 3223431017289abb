/**
 * Backup and migration of the service's only durable data: integrator records and API-key
 * records, as one JSON document (`keys export` / `keys import`). Keys stay hashed: the
 * document holds each key's SHA-256, never a key, so a restored key works for its holder
 * while the backup itself cannot be used to call the API. Revocations travel with it: the hashes
 * of revoked keys are exported, and an import never brings a revoked key back unless told to.
 */
import { redisKeys, type RedisClient } from '@pmm/core';
import {
  apiKeyRecordProblems,
  integratorRecordProblems,
  parseIntegratorRecord,
  type ApiKeyRecord,
  type IntegratorRecord,
} from '@pmm/protocol';
import { InvalidRecordError, type ApiKeyStore } from './api-key-store';

export const BACKUP_FORMAT = 'pmm-integrators';
export const BACKUP_VERSION = 1;

export interface KeyBackup {
  format: typeof BACKUP_FORMAT;
  version: typeof BACKUP_VERSION;
  exportedAt: string;
  integrators: IntegratorRecord[];
  /** Each key's record with the SHA-256 (hex) of the key. */
  apiKeys: (ApiKeyRecord & { hash: string })[];
  /** SHA-256 (hex) of every revoked key (absent from exports older than this field: none). */
  revokedApiKeys: string[];
}

/** What an import did, for the operator. */
export interface ImportOutcome {
  integrators: number;
  apiKeys: number;
  /** Revocations of the backup now held here (keys stored here with such a hash were revoked). */
  revoked: number;
  /** Records the backup has enabled that stay disabled here: a disable is never undone by a restore. */
  keptDisabled: string[];
}

const HASH_RE = /^[0-9a-f]{64}$/;

/** Every key matching `pattern` on every node (each master of a Cluster). */
async function scanAll(redis: RedisClient, pattern: string): Promise<string[]> {
  const nodes = 'nodes' in redis && typeof redis.nodes === 'function' ? redis.nodes('master') : [redis];
  const found = new Set<string>();
  for (const node of nodes) {
    let cursor = '0';
    do {
      const [next, keys] = await node.scan(cursor, 'MATCH', pattern, 'COUNT', 500);
      for (const k of keys) found.add(k);
      cursor = next;
    } while (cursor !== '0');
  }
  return [...found];
}

/** Glob-escapes a key prefix for SCAN MATCH. */
const globEscape = (s: string) => s.replace(/[*?[\]\\]/g, '\\$&');

/** Reads every integrator (with or without keys) and every API key record. */
export async function exportKeys(store: ApiKeyStore, redis: RedisClient, prefix: string): Promise<KeyBackup> {
  const keys = redisKeys(prefix);
  const integratorKeys = await scanAll(redis, `${globEscape(keys.integrator(''))}*`);
  const integrators: IntegratorRecord[] = [];
  for (const k of integratorKeys.sort()) {
    const text = await redis.get(k);
    // A malformed record stops the export (MalformedIntegratorError names it): a backup that
    // silently left an integrator out would lose it on restore.
    if (text !== null) integrators.push(parseIntegratorRecord(k.slice(keys.integrator('').length), text));
  }
  const apiKeys = (await store.list()).map(({ hash, key }) => ({ hash, ...key }));
  return {
    format: BACKUP_FORMAT,
    version: BACKUP_VERSION,
    exportedAt: new Date().toISOString(),
    integrators,
    apiKeys,
    revokedApiKeys: await store.revokedHashes(),
  };
}

/**
 * Validates a backup document. The envelope (format, version, arrays) failing is an Error;
 * records breaking the rules (the store's one validation, the same as `create`/`update`) or
 * repeating an integrator id, a key hash or a keyId are an InvalidRecordError naming each bad
 * record (by position and id, values JSON-quoted).
 */
export function parseKeyBackup(text: string): KeyBackup {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    throw new Error('the backup is not JSON');
  }
  const d = doc as Partial<KeyBackup> | null;
  if (!d || d.format !== BACKUP_FORMAT || d.version !== BACKUP_VERSION)
    throw new Error(`not a ${BACKUP_FORMAT} v${BACKUP_VERSION} document`);
  if (!Array.isArray(d.integrators) || !Array.isArray(d.apiKeys))
    throw new Error('the backup needs "integrators" and "apiKeys" arrays');
  const problems: string[] = [];
  const integrators: IntegratorRecord[] = [];
  const ids = new Set<string>();
  d.integrators.forEach((raw: unknown, i) => {
    const where = `integrators[${i}]`;
    let record: IntegratorRecord;
    try {
      record = parseIntegratorRecord(where, JSON.stringify(raw));
    } catch (err) {
      problems.push(`${where}: not an integrator record (${(err as Error).message})`);
      return;
    }
    const label = `${where} (id ${JSON.stringify(record.id)})`;
    for (const p of integratorRecordProblems(record)) problems.push(`${label}: ${p}`);
    if (ids.has(record.id)) problems.push(`${label}: the id appears twice`);
    ids.add(record.id);
    integrators.push(record);
  });
  const apiKeys: KeyBackup['apiKeys'] = [];
  const hashes = new Set<string>();
  const keyIds = new Set<string>();
  d.apiKeys.forEach((raw: unknown, i) => {
    const where = `apiKeys[${i}]`;
    const v = (typeof raw === 'object' && raw !== null ? raw : {}) as Record<string, unknown>;
    const record = {
      integratorId: v.integratorId,
      keyId: v.keyId,
      createdAt: v.createdAt ?? 0,
      disabled: v.disabled ?? false,
    } as ApiKeyRecord;
    const label = typeof v.keyId === 'string' ? `${where} (keyId ${JSON.stringify(v.keyId)})` : where;
    const own = apiKeyRecordProblems(record);
    if (typeof v.hash !== 'string' || !HASH_RE.test(v.hash)) own.push('needs a SHA-256 "hash" (64 lowercase hex)');
    else if (hashes.has(v.hash)) own.push('the hash appears twice');
    if (typeof v.keyId === 'string' && keyIds.has(v.keyId)) own.push('the keyId appears twice');
    for (const p of own) problems.push(`${label}: ${p}`);
    if (typeof v.hash === 'string') hashes.add(v.hash);
    if (typeof v.keyId === 'string') keyIds.add(v.keyId);
    if (own.length === 0) apiKeys.push({ hash: v.hash as string, ...record });
  });
  const revoked = d.revokedApiKeys ?? [];
  if (!Array.isArray(revoked)) problems.push('revokedApiKeys: must be an array of SHA-256 hashes');
  const revokedApiKeys = Array.isArray(revoked) ? [...new Set(revoked)] : [];
  revokedApiKeys.forEach((hash: unknown, i) => {
    if (typeof hash !== 'string' || !HASH_RE.test(hash))
      problems.push(`revokedApiKeys[${i}]: needs a SHA-256 hash (64 lowercase hex)`);
    else if (hashes.has(hash)) problems.push(`revokedApiKeys[${i}]: the hash is also a live key in apiKeys`);
  });
  refuseIfAny(problems);
  return {
    format: BACKUP_FORMAT,
    version: BACKUP_VERSION,
    exportedAt: String(d.exportedAt ?? ''),
    integrators,
    apiKeys,
    revokedApiKeys: revokedApiKeys as string[],
  };
}

function refuseIfAny(problems: string[]): void {
  if (problems.length === 0) return;
  throw new InvalidRecordError(
    `the backup has ${problems.length} problem${problems.length === 1 ? '' : 's'}; nothing was imported:\n  ${problems.join('\n  ')}`,
    problems,
  );
}

/**
 * Writes every record of `backup` (replacing records with the same integrator id or key
 * hash; nothing else is touched). Before writing anything it checks what only Redis can tell:
 * each key's integrator exists (in the backup or already), no keyId is taken by another key,
 * and no key of the backup was revoked here (a backup older than a revocation would bring a
 * leaked key back) unless `restoreRevoked`. Then the backup's revocations are applied, and a
 * key or integrator disabled here stays disabled whatever the backup says. Integrators first,
 * so that no key points nowhere.
 */
export async function importKeys(
  store: ApiKeyStore,
  backup: KeyBackup,
  options: { restoreRevoked?: boolean } = {},
): Promise<ImportOutcome> {
  const problems: string[] = [];
  const inBackup = new Set(backup.integrators.map((r) => r.id));
  const existing = await store.list();
  const revokedHere = new Set(await store.revokedHashes());
  for (const [i, { hash, keyId, integratorId }] of backup.apiKeys.entries()) {
    const label = `apiKeys[${i}] (keyId ${JSON.stringify(keyId)})`;
    if (!inBackup.has(integratorId) && !(await store.getIntegrator(integratorId)))
      problems.push(`${label}: integrator ${JSON.stringify(integratorId)} is neither in the backup nor stored`);
    const clash = existing.find((l) => l.key.keyId === keyId && l.hash !== hash);
    if (clash) problems.push(`${label}: the keyId belongs to another stored key`);
    if (revokedHere.has(hash) && !options.restoreRevoked)
      problems.push(`${label}: this key was revoked here; --restore-revoked brings it back`);
  }
  refuseIfAny(problems);
  const keptDisabled: string[] = [];
  for (const integrator of backup.integrators) {
    const stored = await store.getIntegrator(integrator.id);
    const disabled = integrator.disabled || stored?.disabled === true;
    if (disabled && !integrator.disabled) keptDisabled.push(`integrator ${integrator.id}`);
    await store.putIntegrator({ ...integrator, disabled });
  }
  const storedKeys = new Map(existing.map((l) => [l.hash, l.key]));
  for (const { hash, ...record } of backup.apiKeys) {
    const disabled = record.disabled || storedKeys.get(hash)?.disabled === true;
    if (disabled && !record.disabled) keptDisabled.push(`key ${record.keyId}`);
    await store.storeKeyHash(hash, { ...record, disabled });
  }
  for (const hash of backup.revokedApiKeys) await store.revokeHash(hash);
  return {
    integrators: backup.integrators.length,
    apiKeys: backup.apiKeys.length,
    revoked: backup.revokedApiKeys.length,
    keptDisabled,
  };
}
