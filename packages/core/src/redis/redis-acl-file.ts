/**
 * docker-compose.yml's `redis-acl` step (`node packages/core/dist/redis/redis-acl-file.js`), run once
 * before Redis starts: renders Redis's ACL file from redis-acl.ts's rules and the users'
 * password files, so that the rules have one definition and no password sits in the compose
 * file, an image or the ACL file (which holds their SHA-256 only). Not exported from the
 * package: it is a program, run by compose.
 *
 *   REDIS_USERS_DIR      folder with one password file per user, named after it (gateway,
 *                        signer, keys, operator, indexer-<id>, ledger-<id>); default /run/secrets/redis-users
 *   REDIS_ACL_FILE       where the ACL file goes (Redis's `--aclfile`); default /run/redis-acl/users.acl
 *   REDIS_KEY_PREFIX     the services' key prefix (the rules name keys under it)
 *   REDIS_ACL_DEV_KEY    true: the gateway's user may seed the development key (devnet trial)
 *   CONFIG_WAIT_SECONDS  wait up to this long for the password files (the devnet profile writes
 *                        them as it starts); then a missing one fails the step, naming it
 *   REDIS_URL_GIVEN, REDIS_RECORDS_URL_GIVEN
 *                        the REDIS_URL and REDIS_RECORDS_URL compose was given (empty: unset); the
 *                        first without the second fails the step (below)
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { redisStackUsers, stackAclFile } from './redis-acl';
import { replaceFile } from '../cli/replace-file';

async function main(): Promise<number> {
  // The records default to compose's own `redis`, whatever REDIS_URL says (Compose v1 cannot make
  // that default follow REDIS_URL: no nested interpolation). So a REDIS_URL of one's own without
  // REDIS_RECORDS_URL (a deployment from before the two roles) would send the records to a Redis
  // nobody named: refused here, before either Redis starts, and so before any service. The URLs
  // are never printed (one may carry a password).
  if (process.env.REDIS_URL_GIVEN && !process.env.REDIS_RECORDS_URL_GIVEN) {
    process.stderr.write(
      'redis-acl: REDIS_URL is set but REDIS_RECORDS_URL is not: the records (API keys, integrators, halts, the audit trail, the ledgers) ' +
        "would go to compose's own `redis` service, not to that Redis. Set REDIS_RECORDS_URL in .env: to the same URL to keep " +
        'everything on that Redis, as before the two Redis roles, or to the Redis that keeps the records (docs/operations/redis.md#redis).\n',
    );
    return 1;
  }
  const dir = process.env.REDIS_USERS_DIR || '/run/secrets/redis-users';
  const out = process.env.REDIS_ACL_FILE || '/run/redis-acl/users.acl';
  const waitSeconds = Number(process.env.CONFIG_WAIT_SECONDS || 0);
  const users = redisStackUsers().map((u) => u.user);
  const missing = () => users.filter((user) => !existsSync(path.join(dir, user)));
  const deadline = Date.now() + waitSeconds * 1000;
  while (missing().length > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 500));
  if (missing().length > 0) {
    process.stderr.write(`redis-acl: no password file for ${missing().join(', ')} in ${dir}\n`);
    return 1;
  }
  const passwords = Object.fromEntries(users.map((user) => [user, readFileSync(path.join(dir, user), 'utf8').trim()]));
  const short = users.filter((user) => passwords[user]!.length < 16);
  if (short.length > 0) {
    process.stderr.write(`redis-acl: the password of ${short.join(', ')} is shorter than 16 characters\n`);
    return 1;
  }
  const text = stackAclFile(passwords, {
    prefix: process.env.REDIS_KEY_PREFIX || undefined,
    devKey: process.env.REDIS_ACL_DEV_KEY === 'true',
  });
  // Readable by Redis's own user (another uid): the file holds password hashes, not passwords.
  replaceFile(out, text, 0o644);
  process.stdout.write(`redis-acl: ${users.length} users and the default user (off) written to ${out}\n`);
  return 0;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`redis-acl: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  },
);
