/**
 * The compose devnet profile's hand-over: the devnet writes the devnet-only secrets into a
 * folder that every service reads as SECRETS_DIR (one file per setting, named after the
 * setting in lower case), so that trying the stack needs no key pasted into `.env`:
 *   <dir>/internal_token              random, created once and kept across devnet restarts
 *   <dir>/signer_key_<id>             the chain's API signer (public devnet key)
 *   <dir>/chain-<id>/quoter_key       the chain's quoter, for that chain's indexer
 * Written before the chains file, which the services wait for, so they are there first.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { KNOWN_CHAIN_IDS } from '@pmm/core';
import { devnetKey } from './devnet-keys';

function writeSecret(file: string, value: string): void {
  mkdirSync(path.dirname(file), { recursive: true });
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, `${value}\n`, { mode: 0o600 });
  renameSync(tmp, file);
}

/** Writes the secrets folder; returns the files written. */
export function writeComposeSecrets(dir: string): string[] {
  const files: string[] = [];
  const token = path.join(dir, 'internal_token');
  if (!existsSync(token)) writeSecret(token, randomBytes(32).toString('base64url'));
  files.push(token);
  for (const id of KNOWN_CHAIN_IDS) {
    const signer = path.join(dir, `signer_key_${id}`);
    const quoter = path.join(dir, `chain-${id}`, 'quoter_key');
    writeSecret(signer, devnetKey('apiSigner', id).privateKey);
    writeSecret(quoter, devnetKey('quoter', id).privateKey);
    files.push(signer, quoter);
  }
  return files;
}
