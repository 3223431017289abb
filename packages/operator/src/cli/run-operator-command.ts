/**
 * The process side shared by the operator commands' entry points (audit/audit.ts, settle/settle.ts,
 * markouts/markouts.ts; risk/risk.ts, which opens its own connections, uses reportErrors alone):
 * usage on no arguments or `help`, the operator context (Redis, chains), exit codes, and a last
 * resort for errors outside the command (e.g. Redis unreachable).
 */
import { exitWhenWritten, redactText } from '@pmm/core';
import { openOperatorContext, type OperatorContext } from './operator-context';
import { UsageError } from './cli-options';

/**
 * An error's message with every secret redacted: a node library's message can quote the request
 * URL, whose path or query holds a hosted node's key (registered when CHAINS was read).
 */
function errorText(err: unknown): string {
  return redactText(err instanceof Error ? err.message : String(err));
}

export interface OperatorIo {
  out(text: string): void;
  err(line: string): void;
}

/** Runs `command` and turns its outcome into an exit code: 0 or its own, 2 usage, 1 error. */
export async function reportErrors(
  name: string,
  usage: string,
  io: OperatorIo,
  command: () => Promise<number>,
): Promise<number> {
  try {
    return await command();
  } catch (err) {
    if (err instanceof UsageError) {
      io.err(`${name}: ${err.message}\n\n${usage}`);
      return 2;
    }
    io.err(`${name}: ${errorText(err)}`);
    return 1;
  }
}

/** The whole process: parses nothing itself, exits with the command's code. */
export function runOperatorCli(
  name: string,
  usage: string,
  command: (argv: string[], ctx: OperatorContext, io: OperatorIo) => Promise<number>,
): void {
  const argv = process.argv.slice(2);
  const io: OperatorIo = {
    out: (text) => process.stdout.write(text),
    err: (line) => process.stderr.write(`${line}\n`),
  };
  const main = async (): Promise<number> => {
    if (argv.length === 0 || ['help', '--help', '-h'].includes(argv[0]!)) {
      io.out(`${usage}\n`);
      return argv.length === 0 ? 2 : 0;
    }
    const ctx = await openOperatorContext(`operator-${name}-cli`);
    try {
      return await command(argv, ctx, io);
    } finally {
      ctx.close();
    }
  };
  // Exits only once the output is written: a pipe to a slow reader must get every line.
  main().then(
    (code) => exitWhenWritten(code),
    (err: unknown) => {
      io.err(`${name}: ${errorText(err)}`);
      return exitWhenWritten(1);
    },
  );
}
