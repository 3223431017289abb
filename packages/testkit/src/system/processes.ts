/** Child processes in tests and benchmarks: stopping them (waiting until they are really gone), their CPU time. */
import type { ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';

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

/**
 * Kernel clock ticks per second of /proc's CPU times: USER_HZ, which Linux fixes at 100 for
 * user space on every architecture this runs on (`getconf CLK_TCK`).
 */
const TICKS_PER_SECOND = 100;

/**
 * CPU seconds (user + system) process `pid` has used so far, from /proc/<pid>/stat; the
 * benchmarks charge a server process's CPU to the requests it answered between two readings
 * (10 ms resolution: read over windows of seconds).
 */
export function processCpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // After the command name (in parentheses, which may hold spaces): state, ppid, …; utime and
  // stime are the 14th and 15th fields of the line.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
}
