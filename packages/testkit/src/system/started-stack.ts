/**
 * `npm start` itself (scripts/start.mjs), on free ports, with its own stack file, a private
 * Redis and fast blocks: for the tests of the start script and of what reads its stack file
 * (the SDK's programs, the soak bench). Every other test that
 * needs the system starts it with startSystem (system.ts): the same processes with the same
 * settings, started together rather than one after another, and no stack file.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { REPO_ROOT } from './repo-root';

export interface StartedStack {
  process: ChildProcess;
  /** The stack description (gateway URL and key, chains, test accounts). */
  stackFile: string;
  /** Everything the start script printed so far. */
  output(): string;
}

export interface StartStackOptions {
  /** Rejects when the stack has not announced itself up by then. */
  timeoutMs?: number;
  /** Settings over the test defaults below (the soak bench sets its ports, key and limits). */
  env?: NodeJS.ProcessEnv;
  /** Start it as the README does, `npm start` (then `process` is npm's), rather than the script itself. */
  throughNpm?: boolean;
}

/** Starts the stack and resolves once it announces itself up. */
export async function startStack({
  timeoutMs = 150_000,
  env = {},
  throughNpm = false,
}: StartStackOptions = {}): Promise<StartedStack> {
  const dir = mkdtempSync(path.join(tmpdir(), 'pmm-stack-'));
  const stackFile = path.join(dir, 'stack.json');
  let output = '';
  const [command, args] = throughNpm
    ? ['npm', ['start', '--silent']]
    : [process.execPath, [path.join(REPO_ROOT, 'scripts/start.mjs')]];
  const child = spawn(command, args, {
    cwd: REPO_ROOT,
    env: {
      ...process.env,
      STACK_PORTS: 'free',
      STACK_FILE: stackFile,
      // Fast blocks keep the tests short; the defaults are the real chains' periods.
      DEVNET_BLOCK_MS_8453: '500',
      DEVNET_BLOCK_MS_56: '500',
      DEVNET_BLOCK_MS_4663: '500',
      REDIS_URL: '', // a private Redis, as on a fresh machine
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  // The stack file lives as long as the stack: removed when the start script exits.
  child.on('exit', () => rmSync(dir, { recursive: true, force: true }));
  child.stdout!.on('data', (d) => (output += String(d)));
  child.stderr!.on('data', (d) => (output += String(d)));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`stack not up after ${timeoutMs / 1_000} s:\n${output}`)),
      timeoutMs,
    );
    const check = () => {
      if (output.includes('The stack is up')) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout!.on('data', check);
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`stack exited with ${code}:\n${output}`));
    });
  });
  return { process: child, stackFile, output: () => output };
}
