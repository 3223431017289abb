/**
 * A throw-away redis-server on a free port, for fault tests: stop it (even with SIGKILL) and
 * start it again on the same port. Without options it keeps nothing (it comes back empty);
 * `dir` + `args` (e.g. `--appendonly yes`) make it persist there across restarts; `config`
 * gives it configuration lines (its users, say) with no file.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { freePort, waitForPort } from '../system/ports';
import { stopProcess } from '../system/processes';

export interface PrivateRedis {
  url: string;
  port: number;
  /** Starts it again after stop() (same port); no-op while it runs. */
  start(): Promise<void>;
  /** Stops it and waits until the process is gone (a paused one too). */
  stop(signal?: NodeJS.Signals): Promise<void>;
  /** Freezes it (SIGSTOP): connections stay open and nothing is answered, as a stalled host looks. */
  pause(): void;
  /** Lets a paused server go on (SIGCONT). */
  resume(): void;
}

export interface PrivateRedisOptions {
  /** Working directory (RDB/AOF files); default: the current one, with persistence off. */
  dir?: string;
  /** Extra redis-server arguments, after the defaults (`--save '' --appendonly no`), so they win. */
  args?: string[];
  /**
   * redis.conf lines (`user …` lines of an ACL, say), read from standard input (`redis-server -`)
   * at each start: nothing written to disk. The defaults and `args` are applied after them, so they win.
   */
  config?: string;
}

export async function privateRedis(opts: PrivateRedisOptions = {}): Promise<PrivateRedis> {
  const port = await freePort();
  let child: ChildProcess | undefined;
  const args = [
    '--port',
    String(port),
    '--bind',
    '127.0.0.1',
    '--save',
    '',
    '--appendonly',
    'no',
    ...(opts.dir ? ['--dir', opts.dir] : []),
    ...(opts.args ?? []),
    ...(opts.config === undefined ? [] : ['-']),
  ];
  const start = async () => {
    if (child && child.exitCode === null && child.signalCode === null) return;
    child = spawn('redis-server', args, { stdio: [opts.config === undefined ? 'ignore' : 'pipe', 'ignore', 'ignore'] });
    // A server that fails to start closes its input early: its exit is what waitForPort reports.
    child.stdin?.on('error', () => undefined).end(opts.config);
    await waitForPort(port);
  };
  const stop = async (signal: NodeJS.Signals = 'SIGKILL') => {
    const c = child;
    child = undefined;
    // A stopped process takes no signal but SIGKILL until it is continued.
    c?.kill('SIGCONT');
    if (c) await stopProcess(c, signal);
  };
  await start();
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    start,
    stop,
    pause: () => void child?.kill('SIGSTOP'),
    resume: () => void child?.kill('SIGCONT'),
  };
}
