/**
 * An indexer replica as a child process, started the way an operator starts one (main.ts,
 * configuration from the environment), with its JSON log lines collected.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { createInterface } from 'node:readline';

const ROOT = path.resolve(__dirname, '../../../..');

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

/** Runs services/indexer/src/main.ts through the repository's TypeScript require hook. */
export function spawnIndexer(env: Record<string, string>): IndexerProcess {
  const child = spawn(
    process.execPath,
    ['-r', path.join(ROOT, 'scripts/lib/ts-register.cjs'), path.join(ROOT, 'services/indexer/src/main.ts')],
    {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
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
