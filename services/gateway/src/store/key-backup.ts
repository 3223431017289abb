/**
 * Backup and migration of the service's only durable data: integrator records and API-key
 * records, as one JSON document (`keys export` / `keys import`). Keys stay hashed: the
 * document holds each key's SHA-256, never a key, so a restored key works for its holder
 * while the backup itself cannot be used to call the API.
 */
import { redisKeys, type ApiKeyRecord, type IntegratorRecord, type RedisClient } from '@pmm/core';
import { parseApiKeyRecord, parseIntegratorRecord, type ApiKeyStore } from './api-key-store';

export const BACKUP_FORMAT = 'pmm-integrators';
export const BACKUP_VERSION = 1;

export interface KeyBackup {
  format: typeof BACKUP_FORMAT;
  version: typeof BACKUP_VERSION;
  exportedAt: string;
  integrators: IntegratorRecord[];
  /** Each key's record with the SHA-256 (hex) of the key. */
  apiKeys: (ApiKeyRecord & { hash: string })[];
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
    const record = parseIntegratorRecord(await redis.get(k));
    if (record) integrators.push(record);
  }
  const apiKeys = (await store.list()).map(({ hash, key }) => ({ hash, ...key }));
  return {
    format: BACKUP_FORMAT,
    version: BACKUP_VERSION,
    exportedAt: new Date().toISOString(),
    integrators,
    apiKeys,
  };
}

/** Validates a backup document; throws an Error naming the first problem. */
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
  const integrators = d.integrators.map((raw, i) => {
    const record = parseIntegratorRecord(JSON.stringify(raw));
    if (!record) throw new Error(`integrators[${i}] is not an integrator record`);
    return record;
  });
  const apiKeys = d.apiKeys.map((raw, i) => {
    const hash = (raw as { hash?: unknown } | null)?.hash;
    const record = parseApiKeyRecord(JSON.stringify(raw));
    if (typeof hash !== 'string' || !HASH_RE.test(hash) || !record)
      throw new Error(`apiKeys[${i}] is not a key record with a SHA-256 "hash"`);
    return { hash, ...record };
  });
  return {
    format: BACKUP_FORMAT,
    version: BACKUP_VERSION,
    exportedAt: String(d.exportedAt ?? ''),
    integrators,
    apiKeys,
  };
}

/**
 * Writes every record of `backup` (replacing records with the same integrator id or key
 * hash; nothing else is touched). Integrators first, so that no key points nowhere.
 */
export async function importKeys(
  store: ApiKeyStore,
  backup: KeyBackup,
): Promise<{ integrators: number; apiKeys: number }> {
  for (const integrator of backup.integrators) await store.putIntegrator(integrator);
  for (const { hash, ...record } of backup.apiKeys) await store.storeKeyHash(hash, record);
  return { integrators: backup.integrators.length, apiKeys: backup.apiKeys.length };
}
