/**
 * A throw-away three-master Redis Cluster on free ports, for tests of the `redis-cluster://`
 * URL form and of scripts that must keep a chain's keys in one slot.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { canListen, freePort, waitForPort } from './ports';
import { stopAll } from './processes';
import { redisTlsArgs, type TlsCert } from './tls-cert';

export interface PrivateRedisCluster {
  /** `redis-cluster://127.0.0.1:<port>,…` (`rediss-cluster://` with TLS), the form createRedis takes. */
  url: string;
  /** The nodes' ports (all masters). */
  ports: number[];
  /** Stops every node and waits until they are gone. */
  stop(): Promise<void>;
}

export interface PrivateRedisClusterOptions {
  /** Extra redis-server arguments of every node, after the defaults (persistence off), so they win. */
  args?: string[];
  /** Serve TLS only, with this certificate, between the nodes too; the URL is then `rediss-cluster://`. */
  tls?: TlsCert;
}

export async function privateRedisCluster(opts: PrivateRedisClusterOptions = {}): Promise<PrivateRedisCluster> {
  // Cluster bus ports are port + 10000: pick ports whose bus port is free too.
  const ports: number[] = [];
  while (ports.length < 3) {
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
        ...['--cluster', 'create', ...ports.map((p) => `127.0.0.1:${p}`), '--cluster-replicas', '0', '--cluster-yes'],
      ],
      { encoding: 'utf8', timeout: 30_000 },
    );
    if (create.status !== 0) throw new Error(`cluster create failed: ${create.stdout} ${create.stderr}`);
  } catch (err) {
    await stop();
    throw err;
  }
  const scheme = opts.tls ? 'rediss-cluster' : 'redis-cluster';
  return { url: `${scheme}://${ports.map((p) => `127.0.0.1:${p}`).join(',')}`, ports, stop };
}
