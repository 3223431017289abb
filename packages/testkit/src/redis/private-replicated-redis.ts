/**
 * A throw-away primary with replicas on free ports, each node with the shipped settings of a
 * replicated deployment (deploy/redis/replicated.conf: the append-only file fsynced before each
 * answer, min-replicas-to-write 1), in folders of their own removed at stop(): what replica-mode
 * durable writes (`REDIS_DURABILITY=replica`, WAIT) are tested and measured against. Resolves
 * once every replica is in sync and the primary counts them good (a WAIT before that counts 0).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { privateRedis, type PrivateRedis } from './private-redis';
import { REPO_ROOT } from '../system/repo-root';
import { until } from '../polling/until';

/** The settings every node of a replicated deployment includes. */
export const REPLICATED_CONF = path.join(REPO_ROOT, 'deploy/redis/replicated.conf');

export interface PrivateReplicatedRedis {
  /** The primary's `redis://127.0.0.1:<port>`. */
  url: string;
  primary: PrivateRedis;
  replicas: PrivateRedis[];
  /** Stops every node (SIGKILL: they keep nothing wanted) and removes their folders. */
  stop(): Promise<void>;
}

export interface PrivateReplicatedRedisOptions {
  /** Replicas of the primary; default 1. */
  replicas?: number;
  /** Extra redis-server arguments of every node, after the shipped settings, so they win. */
  args?: string[];
}

export async function privateReplicatedRedis(
  opts: PrivateReplicatedRedisOptions = {},
): Promise<PrivateReplicatedRedis> {
  const dirs: string[] = [];
  const nodes: PrivateRedis[] = [];
  const stop = async () => {
    await Promise.all(nodes.map((n) => n.stop()));
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  };
  const node = (extra: string[]) => {
    const dir = mkdtempSync(path.join(tmpdir(), 'replicated-redis-'));
    dirs.push(dir);
    // The shipped file first (a config file must come first), then what a test changes.
    return privateRedis({ dir, args: ['--include', REPLICATED_CONF, ...extra, ...(opts.args ?? [])] });
  };
  try {
    // No delay before the first full sync (the default waits 5 s for more replicas).
    const primary = await node(['--repl-diskless-sync-delay', '0']);
    nodes.push(primary);
    const replicas: PrivateRedis[] = [];
    for (let i = 0; i < (opts.replicas ?? 1); i++) {
      const replica = await node(['--replicaof', '127.0.0.1', String(primary.port)]);
      nodes.push(replica);
      replicas.push(replica);
    }
    // Loaded here, not at the top: most files that import testkit start no Redis of their own.
    const { closeRedis, createRedis } = await import('@pmm/core');
    const admin = createRedis(primary.url, { name: 'replicated-setup' });
    try {
      await until(
        async () => {
          const info = String(await admin.info('replication').catch(() => ''));
          const online = info.match(/^slave\d+:.*state=online/gm)?.length ?? 0;
          const good = Number(/^min_slaves_good_slaves:(\d+)/m.exec(info)?.[1] ?? 0);
          return online === replicas.length && good === replicas.length;
        },
        30_000,
        'every replica in sync with the primary',
        50,
      );
    } finally {
      await closeRedis(admin);
    }
    return { url: primary.url, primary, replicas, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}
