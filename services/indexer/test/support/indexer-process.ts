/**
 * An indexer replica as a child process, started the way an operator starts one (its build,
 * configuration from the environment: testkit's spawnService), with its JSON log lines collected.
 */
import type { ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { spawnService } from '@pmm/testkit';

export interface LogLine {
  message: string;
  level: string;
  [field: string]: unknown;
}

export interface IndexerProcess {
  child: ChildProcess;
  lines: LogLine[];
  /** Block numbers this replica computed (one `block computed` line each). */
  computed(): number[];
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Runs the indexer's build with exactly `env` (and PATH); resolves nothing: the caller waits for what it needs. */
export function spawnIndexer(env: Record<string, string>): IndexerProcess {
  const { child } = spawnService('indexer', { env });
  const lines: LogLine[] = [];
  const collect = (stream: NodeJS.ReadableStream) =>
    createInterface({ input: stream }).on('line', (line) => {
      try {
        lines.push(JSON.parse(line) as LogLine);
      } catch {
        lines.push({ message: line, level: 'raw' });
      }
    });
  collect(child.stdout!);
  collect(child.stderr!);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  return {
    child,
    lines,
    computed: () => lines.filter((l) => l.message === 'block computed').map((l) => Number(l.block)),
    exited,
  };
}
