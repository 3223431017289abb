/**
 * The operator commands' command line, one definition for all of them (the operator package's audit,
 * settle, markouts and risk through its cli-options.ts; the gateway's keys): node:util's
 * parseArgs, strictly. An unknown option, a missing value, and an option given more than once
 * are refused: parseArgs alone keeps the last of a repeated option, so `risk halt --chain 8453
 * --chain 56` halted chain 56 alone and exited 0. Only an option a command declares as a list
 * (its usage shows it followed by `...`) may be given again, each time one more value.
 */
import { parseArgs } from 'node:util';

/** A command line the command cannot take; the message says what is wrong (the commands exit 2). */
export class CommandLineError extends Error {}

export interface CommandLineSpec {
  /** Options with a value, at most once each. */
  values?: readonly string[];
  /** Options with a value that may be given again: every value, in order. */
  lists?: readonly string[];
  /** Options without a value, at most once each. */
  flags?: readonly string[];
}

export interface CommandLine {
  /** The options with a value that were given. */
  values: Record<string, string>;
  /** The lists that were given, each with at least one value. */
  lists: Record<string, string[]>;
  /** The flags that were given. */
  flags: Set<string>;
  positionals: string[];
}

/** @throws CommandLineError: an unknown option, a missing value, or an option (not a list) given twice */
export function parseCommandLine(argv: readonly string[], spec: CommandLineSpec): CommandLine {
  const lists = new Set(spec.lists);
  const options: Record<string, { type: 'string' | 'boolean'; multiple?: true }> = {};
  for (const name of spec.values ?? []) options[name] = { type: 'string' };
  for (const name of lists) options[name] = { type: 'string', multiple: true };
  for (const name of spec.flags ?? []) options[name] = { type: 'boolean' };
  let parsed;
  try {
    parsed = parseArgs({ args: [...argv], options, allowPositionals: true, strict: true, tokens: true });
  } catch (err) {
    // node:util's own TypeError (ERR_PARSE_ARGS_*), from another realm under jest: its message says what was wrong.
    throw new CommandLineError(String((err as { message?: unknown }).message ?? 'bad arguments'));
  }
  const seen = new Set<string>();
  for (const token of parsed.tokens) {
    if (token.kind !== 'option' || lists.has(token.name)) continue;
    if (seen.has(token.name)) throw new CommandLineError(`--${token.name} given more than once`);
    seen.add(token.name);
  }
  const out: CommandLine = { values: {}, lists: {}, flags: new Set(), positionals: parsed.positionals };
  for (const [name, value] of Object.entries(parsed.values)) {
    if (Array.isArray(value)) out.lists[name] = value.map(String);
    else if (typeof value === 'string') out.values[name] = value;
    else if (value === true) out.flags.add(name);
  }
  return out;
}
