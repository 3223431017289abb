/** Stopping child processes in tests, waiting until they are really gone. */
import type { ChildProcess } from 'node:child_process';

/** Sends `signal` (default SIGTERM) and resolves once the process has exited. */
export function stopProcess(child: ChildProcess, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill(signal);
  });
}

export async function stopAll(children: ChildProcess[], signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  await Promise.all(children.map((c) => stopProcess(c, signal)));
}
