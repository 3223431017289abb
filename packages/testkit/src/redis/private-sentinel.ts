/**
 * A Redis Sentinel (`redis-server --sentinel`) private to a test. Sentinel rewrites its config
 * file as it learns about replicas and fail-overs, so each one gets a file of its own in a
 * temporary folder, which is also its working directory.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { waitForPort } from '../system/ports';

/**
 * Starts a sentinel bound to 127.0.0.1 with `lines` as its configuration (its `port` or
 * `tls-port` line, `sentinel monitor …`, passwords) and resolves once `port` accepts connections.
 * Stop it with stopAll or stopProcess.
 */
export async function startSentinel(port: number, lines: readonly string[]): Promise<ChildProcess> {
  const dir = mkdtempSync(path.join(tmpdir(), 'sentinel-'));
  const conf = path.join(dir, 'sentinel.conf');
  writeFileSync(conf, ['bind 127.0.0.1', `dir ${dir}`, ...lines, ''].join('\n'));
  const child = spawn('redis-server', [conf, '--sentinel'], { stdio: 'ignore' });
  await waitForPort(port);
  return child;
}
