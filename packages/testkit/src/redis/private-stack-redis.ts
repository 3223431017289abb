/**
 * The deployment's Redis in small: two throw-away servers, the records (REDIS_RECORDS_URL) and
 * what can be rebuilt (REDIS_URL, core's redis-roles.ts), with the users `npm start` gives them
 * (scripts/start.mjs): both load the same ACL, rendered by core's stackAclFile: the default user
 * off, an administrator with every right, and each stack user (redisStackUsers: gateway,
 * signer, indexer-<id>, ledger-<id>, keys, operator, risk) with a random password of this run.
 * Each process of a test then connects as its own user on each server, as it does under
 * `npm start`, so a key read or written on the wrong server, or outside a user's rights, fails
 * in the tests as it would deployed.
 *
 * The ACL reaches each server on standard input (privateRedis's `config`), hashes only, and like
 * privateRedis the servers keep nothing on disk unless `dir` and `args` ask for it.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { privateRedis, type PrivateRedis } from './private-redis';

export interface PrivateStackRedis {
  /** The two servers (stop/start/pause for fault tests). */
  records: PrivateRedis;
  rebuildable: PrivateRedis;
  /** The administrator's URL (every right) of each server. */
  recordsUrl: string;
  rebuildableUrl: string;
  /** Stack user `user`'s URL (e.g. 'risk', 'ledger-8453', 'gateway') on one server. */
  urlOf(user: string, server: 'records' | 'rebuildable'): string;
  /** What a process running as `user` gets, as npm start gives it: { REDIS_URL, REDIS_RECORDS_URL }. */
  envOf(user: string): { REDIS_URL: string; REDIS_RECORDS_URL: string };
  stop(signal?: NodeJS.Signals): Promise<void>;
}

/** The administrator's user name, as `npm start` names it. */
const ADMIN_USER = 'admin';

const password = () => randomBytes(24).toString('base64url');

/**
 * Starts both servers. `dir`: a folder for their files (one subfolder each, `records` and
 * `rebuildable`), for `args` that persist; `devKey` (default true): the gateway may seed the
 * development key, as startSystem's gateway does; `chainIds`: the chains with an indexer and a
 * ledger user (default every known chain, as `npm start`); `args`: extra redis-server arguments
 * of both servers.
 */
export async function privateStackRedis(
  opts: { dir?: string; devKey?: boolean; chainIds?: readonly number[]; args?: string[] } = {},
): Promise<PrivateStackRedis> {
  // Loaded here, not at the top: most files that import testkit start no Redis of their own.
  const { redisStackUsers, stackAclFile } = await import('@pmm/core');
  const admin = { user: ADMIN_USER, password: password() };
  const passwords: Record<string, string> = Object.fromEntries(
    redisStackUsers(opts.chainIds).map(({ user }) => [user, password()]),
  );
  const config = stackAclFile(passwords, { devKey: opts.devKey ?? true, chainIds: opts.chainIds, admin });
  const start = (name: 'records' | 'rebuildable') => {
    const dir = opts.dir === undefined ? undefined : path.join(opts.dir, name);
    if (dir) mkdirSync(dir, { recursive: true });
    return privateRedis({ dir, args: opts.args, config });
  };
  const started = await Promise.allSettled([start('records'), start('rebuildable')]);
  const up = started.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
  const failed = started.find((s): s is PromiseRejectedResult => s.status === 'rejected');
  if (failed) {
    await Promise.all(up.map((server) => server.stop()));
    throw failed.reason;
  }
  const [records, rebuildable] = up as [PrivateRedis, PrivateRedis];
  const servers = { records, rebuildable };
  const urlAs = (user: string, secret: string, server: PrivateRedis) =>
    `redis://${user}:${secret}@127.0.0.1:${server.port}`;
  const urlOf = (user: string, server: 'records' | 'rebuildable') => {
    const secret = passwords[user];
    if (secret === undefined)
      throw new Error(`privateStackRedis: no stack user ${user} (one of ${Object.keys(passwords).join(', ')})`);
    return urlAs(user, secret, servers[server]);
  };
  return {
    records,
    rebuildable,
    recordsUrl: urlAs(admin.user, admin.password, records),
    rebuildableUrl: urlAs(admin.user, admin.password, rebuildable),
    urlOf,
    envOf: (user) => ({ REDIS_URL: urlOf(user, 'rebuildable'), REDIS_RECORDS_URL: urlOf(user, 'records') }),
    stop: async (signal) => {
      await Promise.all([records.stop(signal), rebuildable.stop(signal)]);
    },
  };
}
