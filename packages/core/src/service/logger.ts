/**
 * winston logger factory. JSON lines with `service`, `level`, `message`, fields. Secrets
 * cannot be printed: fields whose name looks secret are dropped to `[redacted]`, and every
 * value registered in secrets.ts is masked anywhere in the line (see logger.test.ts).
 */
import winston from 'winston';
import { redactText, SECRET_FIELD } from '../settings/secrets';

export type Logger = winston.Logger;

/**
 * Deeper than this, a value is replaced whole by `[truncated]`: redaction has no depth at which
 * a value passes through unchecked (a log line that deep is a bug, not information).
 */
const MAX_DEPTH = 64;

/** Causes followed at most this deep (a chain that long is a loop or a bug). */
const MAX_CAUSES = 8;

/** An error's stack, then each of its causes' (`Error.cause`), so that a line leads to the origin. */
function errorText(err: Error, depth = 0): string {
  const text = err.stack ?? err.message;
  const cause: unknown = err.cause;
  if (cause === undefined || depth >= MAX_CAUSES) return text;
  return `${text}\ncaused by: ${cause instanceof Error ? errorText(cause, depth + 1) : String(cause)}`;
}

/** `value` with every secret-named field and registered secret masked, at any depth; cycles cut. */
function redactValue(value: unknown, depth: number, seen: WeakSet<object>): unknown {
  if (typeof value === 'string') return redactText(value);
  if (value instanceof Error) return redactText(errorText(value));
  if (value === null || typeof value !== 'object') return value;
  if (depth > MAX_DEPTH) return '[truncated]';
  if (seen.has(value)) return '[circular]';
  seen.add(value);
  let out: unknown;
  if (Array.isArray(value)) out = value.map((v) => redactValue(v, depth + 1, seen));
  else {
    const fields: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value))
      fields[k] = SECRET_FIELD.test(k) ? '[redacted]' : redactValue(v, depth + 1, seen);
    out = fields;
  }
  seen.delete(value);
  return out;
}

/**
 * The redacting format's transform. Made into a format inside createLogger, not at load: every
 * test file that loads @pmm/core's index would load winston for it (about 0.1 CPU s), most
 * without ever making a logger.
 */
const redact: Parameters<typeof winston.format>[0] = (info) => {
  const seen = new WeakSet<object>();
  for (const key of Object.keys(info)) {
    info[key] = SECRET_FIELD.test(key) ? '[redacted]' : redactValue(info[key], 0, seen);
  }
  return info;
};

export interface LoggerOptions {
  service: string;
  /** error | warn | info | debug; default info. */
  level?: string;
  /** Extra transport (tests capture lines with a stream). Default: stdout. */
  stream?: NodeJS.WritableStream;
  /** Silence all output (unit tests). */
  silent?: boolean;
}

export function createLogger(opts: LoggerOptions): Logger {
  const transport = opts.stream
    ? new winston.transports.Stream({ stream: opts.stream })
    : new winston.transports.Console();
  return winston.createLogger({
    level: opts.level ?? 'info',
    silent: opts.silent ?? false,
    defaultMeta: { service: opts.service },
    format: winston.format.combine(
      winston.format.errors({ stack: true }),
      winston.format.timestamp(),
      winston.format(redact)(),
      winston.format.json(),
    ),
    transports: [transport],
  });
}
