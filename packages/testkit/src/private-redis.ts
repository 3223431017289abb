/**
 * A throw-away redis-server on a free port (no persistence), for fault tests: stop it (even
 * with SIGKILL) and start it again on the same port, empty.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { freePort, waitForPort } from './ports';
import { stopProcess } from './processes';

export interface PrivateRedis {
  url: string;
  port: number;
  /** Starts it again after stop() (same port); no-op while it runs. */
  start(): Promise<void>;
  /** Stops it and waits until the process is gone. */
  stop(signal?: NodeJS.Signals): Promise<void>;
}

export async function privateRedis(): Promise<PrivateRedis> {
  const port = await freePort();
  let child: ChildProcess | undefined;
  const start = async () => {
    if (child && child.exitCode === null && child.signalCode === null) return;
    child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
      stdio: 'ignore',
    });
    await waitForPort(port);
  };
  const stop = async (signal: NodeJS.Signals = 'SIGKILL') => {
    const c = child;
    child = undefined;
    if (c) await stopProcess(c, signal);
  };
  await start();
  return { url: `redis://127.0.0.1:${port}`, port, start, stop };
}
