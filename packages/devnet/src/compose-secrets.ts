/**
 * The compose devnet profile's hand-over: the devnet writes the devnet-only secrets into one
 * folder per service, each a named volume that only that service mounts (at /run/secrets/pmm,
 * its SECRETS_DIR: one file per setting, named after the setting in lower case), so that
 * trying the stack needs no key pasted anywhere and no service holds another's secret:
 *   <dir>/signer/internal_token, <dir>/signer/signer_key_<id>,
 *   <dir>/signer/quoter_key_<id> (its firm quotes)              the signer's
 *   <dir>/gateway/internal_token, <dir>/gateway/dev_api_key      the gateway's
 *   <dir>/indexer-<id>/quoter_key                                 each indexer's
 *   <dir>/<user>/redis_password                                   each Redis user's (redis-acl.ts):
 *                                                                 the services' (the ledgers': only this)
 *                                                                 and the keys, operator and risk tools'
 *   <dir>/redis-users/<user>                                      the same passwords, for the ACL file
 * The internal token, the development API key and the Redis passwords are random, created once
 * and kept across devnet restarts; the chain keys are the public devnet keys. Written before the chains file,
 * which the services wait for, so they are there first.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { redisStackUsers, replaceFile } from '@pmm/core';
import { KNOWN_CHAIN_IDS } from '@pmm/protocol';
import { devnetKey } from './devnet-keys';

/**
 * The services that get a secrets folder, in compose's names (the key CLI's, the operator's and
 * the risk command's `keys`, `operator` and `risk` included), and the folder of the Redis users' passwords.
 */
export const SECRET_FOLDERS = [
  'signer',
  'gateway',
  ...KNOWN_CHAIN_IDS.map((id) => `indexer-${id}`),
  ...KNOWN_CHAIN_IDS.map((id) => `ledger-${id}`),
  'keys',
  'operator',
  'risk',
  'redis-users',
] as const;

function writeSecret(file: string, value: string): void {
  mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  replaceFile(file, `${value}\n`);
}

/** The value kept in `file`, else `fresh()` (then written there too). */
function kept(file: string, fresh: () => string): string {
  return existsSync(file) ? readFileSync(file, 'utf8').trim() : fresh();
}

/** Writes every service's secrets folder; returns the files written. */
export function writeComposeSecrets(dir: string): string[] {
  const files: Record<string, string> = {};
  const token = kept(path.join(dir, 'signer', 'internal_token'), () => randomBytes(32).toString('base64url'));
  files['signer/internal_token'] = token;
  files['gateway/internal_token'] = token;
  files['gateway/dev_api_key'] = kept(
    path.join(dir, 'gateway', 'dev_api_key'),
    () => `pmm_dev_${randomBytes(24).toString('base64url')}`,
  );
  for (const id of KNOWN_CHAIN_IDS) {
    files[`signer/signer_key_${id}`] = devnetKey('apiSigner', id).privateKey;
    files[`signer/quoter_key_${id}`] = devnetKey('quoter', id).privateKey;
    files[`indexer-${id}/quoter_key`] = devnetKey('quoter', id).privateKey;
  }
  // Each Redis user's password: in its process's folder (its REDIS_PASSWORD) and in the folder
  // the ACL file is rendered from. The user names are the compose services' names.
  for (const { user } of redisStackUsers()) {
    const password = kept(path.join(dir, 'redis-users', user), () => randomBytes(24).toString('base64url'));
    files[`redis-users/${user}`] = password;
    files[`${user}/redis_password`] = password;
  }
  return Object.entries(files).map(([name, value]) => {
    const file = path.join(dir, name);
    writeSecret(file, value);
    return file;
  });
}
