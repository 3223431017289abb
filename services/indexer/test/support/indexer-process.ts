/**
 * An indexer replica as a child process, started the way an operator starts one (its build,
 * configuration from the environment: testkit's spawnService or startSystem), with its JSON log
 * lines read from everything it has written.
 */
import type { ChildProcess } from 'node:child_process';
import { spawnService, type ServiceProcess } from '@pmm/testkit';

export interface LogLine {
  message: string;
  level: string;
  [field: string]: unknown;
}

export interface IndexerProcess {
  child: ChildProcess;
  /** Its log lines so far (a line that is not JSON has level `raw`). */
  readonly lines: LogLine[];
  /** Block numbers this replica computed (one `block computed` line each). */
  computed(): number[];
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/**
 * Follows an indexer process, from its first line on: the lines are parsed from the process's
 * whole output (startSystem's replicas have written many before the test gets them).
 */
export function followIndexer(p: ServiceProcess): IndexerProcess {
  const { child } = p;
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null)
      resolve({ code: child.exitCode, signal: child.signalCode });
    else child.once('exit', (code, signal) => resolve({ code, signal }));
  });
  const lines = (): LogLine[] =>
    p
      .output()
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => {
        try {
          return JSON.parse(line) as LogLine;
        } catch {
          return { message: line, level: 'raw' };
        }
      });
  return {
    child,
    get lines() {
      return lines();
    },
    computed: () =>
      lines()
        .filter((l) => l.message === 'block computed')
        .map((l) => Number(l.block)),
    exited,
  };
}

/** Runs the indexer's build with exactly `env` (and PATH); resolves nothing: the caller waits for what it needs. */
export function spawnIndexer(env: Record<string, string>): IndexerProcess {
  return followIndexer(spawnService('indexer', { env }));
}
