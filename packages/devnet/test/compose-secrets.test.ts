/** The devnet's hand-over to the compose services: one file per secret, read as SECRETS_DIR. */
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { loadConfig, settings } from '@pmm/core';
import { writeComposeSecrets } from '../src/compose-secrets';
import { devnetKey } from '../src/devnet-keys';

describe('compose secrets folder', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'devnet-secrets-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('behavior: writes each chain key and a random internal token, private, kept across devnet restarts', () => {
    writeComposeSecrets(dir);
    const token = readFileSync(path.join(dir, 'internal_token'), 'utf8');
    expect(token.trim()).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(statSync(path.join(dir, 'internal_token')).mode & 0o077).toBe(0);
    writeComposeSecrets(dir);
    expect(readFileSync(path.join(dir, 'internal_token'), 'utf8')).toBe(token);
    expect(readFileSync(path.join(dir, 'signer_key_56'), 'utf8').trim()).toBe(devnetKey('apiSigner', 56).privateKey);
  });

  it('behavior: the services read them through SECRETS_DIR under their own setting names', () => {
    const signer = loadConfig(
      { token: settings.secret('INTERNAL_TOKEN', 'token'), key: settings.secret('SIGNER_KEY_8453', 'key') },
      { env: { SECRETS_DIR: dir }, file: {} },
    );
    expect(signer.key).toBe(devnetKey('apiSigner', 8453).privateKey);
    const indexer = loadConfig(
      { quoterKey: settings.secret('QUOTER_KEY', 'quoter') },
      { env: { SECRETS_DIR: path.join(dir, 'chain-4663') }, file: {} },
    );
    expect(indexer.quoterKey).toBe(devnetKey('quoter', 4663).privateKey);
  });
});
