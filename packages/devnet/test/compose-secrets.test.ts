/**
 * The devnet's hand-over to the compose services: one folder per service (a named volume only
 * that service mounts), one file per secret, read as SECRETS_DIR; no service's folder holds
 * another's secret.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { loadConfig, settings } from '@pmm/core';
import { SECRET_FOLDERS, writeComposeSecrets } from '../src/compose-secrets';
import { devnetKey } from '../src/devnet-keys';

describe('compose secrets folders', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'devnet-secrets-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('behavior: each service folder holds its own secrets only', () => {
    writeComposeSecrets(dir);
    const listing = Object.fromEntries(SECRET_FOLDERS.map((f) => [f, readdirSync(path.join(dir, f)).sort()]));
    expect(listing).toEqual({
      signer: [
        'internal_token',
        'quoter_key_4663',
        'quoter_key_56',
        'quoter_key_8453',
        'redis_password',
        'signer_key_4663',
        'signer_key_56',
        'signer_key_8453',
      ],
      gateway: ['dev_api_key', 'internal_token', 'redis_password'],
      'indexer-8453': ['quoter_key', 'redis_password'],
      'indexer-56': ['quoter_key', 'redis_password'],
      'indexer-4663': ['quoter_key', 'redis_password'],
      'ledger-8453': ['redis_password'],
      'ledger-56': ['redis_password'],
      'ledger-4663': ['redis_password'],
      keys: ['redis_password'],
      operator: ['redis_password'],
      risk: ['redis_password'],
      'redis-users': [
        'gateway',
        'indexer-4663',
        'indexer-56',
        'indexer-8453',
        'keys',
        'ledger-4663',
        'ledger-56',
        'ledger-8453',
        'operator',
        'risk',
        'signer',
      ],
    });
    expect(readdirSync(dir).sort()).toEqual([...SECRET_FOLDERS].sort());
  });

  it('behavior: a random internal token shared by signer and gateway and a development key, private, kept across devnet restarts', () => {
    writeComposeSecrets(dir);
    const read = (f: string) => readFileSync(path.join(dir, f), 'utf8');
    const token = read('signer/internal_token');
    expect(token.trim()).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(read('gateway/internal_token')).toBe(token);
    const devKey = read('gateway/dev_api_key');
    expect(devKey.trim()).toMatch(/^pmm_dev_[A-Za-z0-9_-]{32}$/);
    expect(statSync(path.join(dir, 'signer/internal_token')).mode & 0o077).toBe(0);
    expect(statSync(path.join(dir, 'signer')).mode & 0o077).toBe(0);
    writeComposeSecrets(dir);
    expect(read('signer/internal_token')).toBe(token);
    expect(read('gateway/dev_api_key')).toBe(devKey);
    expect(read('signer/signer_key_56').trim()).toBe(devnetKey('apiSigner', 56).privateKey);
  });

  it('behavior: each Redis user has its own random password, the same in its folder and in the ACL source, kept across restarts', () => {
    writeComposeSecrets(dir);
    const read = (f: string) => readFileSync(path.join(dir, f), 'utf8').trim();
    const users = [
      'gateway',
      'signer',
      'keys',
      'operator',
      'risk',
      'indexer-8453',
      'indexer-56',
      'indexer-4663',
      'ledger-8453',
    ];
    const passwords = users.map((u) => read(`redis-users/${u}`));
    for (const [i, u] of users.entries()) {
      expect([u, read(`${u}/redis_password`)]).toEqual([u, passwords[i]]);
      expect(passwords[i]).toMatch(/^[A-Za-z0-9_-]{32}$/);
    }
    expect(new Set(passwords).size).toBe(users.length);
    writeComposeSecrets(dir);
    expect(users.map((u) => read(`redis-users/${u}`))).toEqual(passwords);
    // The service reads it as its REDIS_PASSWORD.
    const gateway = loadConfig(
      { password: settings.secret('REDIS_PASSWORD', 'password') },
      { env: { SECRETS_DIR: path.join(dir, 'gateway') }, file: {} },
    );
    expect(gateway.password).toBe(passwords[0]);
  });

  it('behavior: the services read them through SECRETS_DIR under their own setting names', () => {
    const signer = loadConfig(
      { token: settings.secret('INTERNAL_TOKEN', 'token'), key: settings.secret('SIGNER_KEY_8453', 'key') },
      { env: { SECRETS_DIR: path.join(dir, 'signer') }, file: {} },
    );
    expect(signer.key).toBe(devnetKey('apiSigner', 8453).privateKey);
    const indexer = loadConfig(
      { quoterKey: settings.secret('QUOTER_KEY', 'quoter') },
      { env: { SECRETS_DIR: path.join(dir, 'indexer-4663') }, file: {} },
    );
    expect(indexer.quoterKey).toBe(devnetKey('quoter', 4663).privateKey);
  });
});
