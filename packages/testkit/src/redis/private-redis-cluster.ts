/**
 * A throw-away three-master Redis Cluster on free ports, for tests of the `redis-cluster://`
 * URL form and of scripts that must keep a chain's keys in one slot; with `replicas`, each
 * master has that many replicas (replica mode's WAIT, per master).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { canListen, freePort, waitForPort } from '../system/ports';
import { stopAll } from '../system/processes';
import { redisTlsArgs, type TlsCert } from './tls-cert';

export interface PrivateRedisCluster {
  /** `redis-cluster://127.0.0.1:<port>,…` (`rediss-cluster://` with TLS), the form createRedis takes. */
  url: string;
  /** The masters' ports (the URL's nodes). */
  ports: number[];
  /** Each master's port and its replicas' (empty without `replicas`), once every replica is in sync. */
  shards: { master: number; replicas: number[] }[];
  /** Each node process by port, masters and replicas: pause one (SIGSTOP) to stall it. */
  nodes: ReadonlyMap<number, ChildProcess>;
  /** Stops every node and waits until they are gone. */
  stop(): Promise<void>;
}

export interface PrivateRedisClusterOptions {
  /** Extra redis-server arguments of every node, after the defaults (persistence off), so they win. */
  args?: string[];
  /** Serve TLS only, with this certificate, between the nodes too; the URL is then `rediss-cluster://`. */
  tls?: TlsCert;
  /** Replicas of each master (default 0). */
  replicas?: number;
}

export async function privateRedisCluster(opts: PrivateRedisClusterOptions = {}): Promise<PrivateRedisCluster> {
  // Cluster bus ports are port + 10000: pick ports whose bus port is free too.
  const replicas = opts.replicas ?? 0;
  const ports: number[] = [];
  while (ports.length < 3 * (1 + replicas)) {
    const p = await freePort();
    if (p + 10_000 < 65_536 && !ports.includes(p) && (await canListen(p + 10_000))) ports.push(p);
  }
  const children: ChildProcess[] = ports.map((port) => {
    const dir = mkdtempSync(`${tmpdir()}/cluster-${port}-`);
    return spawn(
      'redis-server',
      [
        ...(opts.tls ? [...redisTlsArgs(opts.tls, port), '--tls-cluster', 'yes'] : ['--port', String(port)]),
        ...['--bind', '127.0.0.1', '--cluster-enabled', 'yes'],
        ...['--cluster-config-file', `${dir}/nodes.conf`, '--save', '', '--appendonly', 'no', '--dir', dir],
        ...(opts.args ?? []),
      ],
      { stdio: 'ignore' },
    );
  });
  const stop = () => stopAll(children);
  try {
    await Promise.all(ports.map((p) => waitForPort(p)));
    const create = spawnSync(
      'redis-cli',
      [
        ...(opts.tls ? ['--tls', '--cacert', opts.tls.certFile] : []),
        ...['--cluster', 'create', ...ports.map((p) => `127.0.0.1:${p}`)],
        ...['--cluster-replicas', String(replicas), '--cluster-yes'],
      ],
      { encoding: 'utf8', timeout: 30_000 },
    );
    if (create.status !== 0) throw new Error(`cluster create failed: ${create.stdout} ${create.stderr}`);
  } catch (err) {
    await stop();
    throw err;
  }
  let shards: { master: number; replicas: number[] }[];
  try {
    shards = await syncedShards(ports, replicas, opts.tls);
  } catch (err) {
    await stop();
    throw err;
  }
  const scheme = opts.tls ? 'rediss-cluster' : 'redis-cluster';
  return {
    url: `${scheme}://${shards.map((s) => `127.0.0.1:${s.master}`).join(',')}`,
    ports: shards.map((s) => s.master),
    shards,
    nodes: new Map(ports.map((p, i) => [p, children[i]!])),
    stop,
  };
}

/** One node's answer to a command, through redis-cli. */
function cli(port: number, tls: TlsCert | undefined, ...command: string[]): string {
  const r = spawnSync(
    'redis-cli',
    [...(tls ? ['--tls', '--cacert', tls.certFile] : []), '-p', String(port), ...command],
    { encoding: 'utf8', timeout: 5_000 },
  );
  return r.stdout ?? '';
}

/**
 * The shards as `CLUSTER NODES` tells them (which node `--cluster create` made a master is its
 * choice), once each master has `replicas` replicas whose link to it is up.
 */
async function syncedShards(
  ports: number[],
  replicas: number,
  tls: TlsCert | undefined,
): Promise<{ master: number; replicas: number[] }[]> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const lines = cli(ports[0]!, tls, 'CLUSTER', 'NODES').trim().split('\n');
    const nodes = lines.map((line) => {
      const [id, address, flags, masterId] = line.split(' ');
      return { id, port: Number(/:(\d+)@/.exec(address ?? '')?.[1]), flags: flags ?? '', masterId };
    });
    const shards = nodes
      .filter((n) => n.flags.includes('master'))
      .map((m) => ({
        master: m.port,
        replicas: nodes.filter((n) => n.flags.includes('slave') && n.masterId === m.id).map((n) => n.port),
      }));
    const synced =
      shards.length === 3 &&
      shards.every((s) => s.replicas.length === replicas) &&
      shards.every((s) => s.replicas.every((p) => /master_link_status:up/.test(cli(p, tls, 'INFO', 'replication'))));
    if (synced) return shards;
    if (Date.now() > deadline) throw new Error(`cluster replicas not in sync after 30 s:\n${lines.join('\n')}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
