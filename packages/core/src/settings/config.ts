/**
 * Declared, validated configuration. Each service declares its settings once (name, type,
 * default, description); `loadConfig` reads them from an optional JSON file (`CONFIG_FILE`),
 * overridden by environment variables, and fails at boot with a message that names the
 * setting. Secrets may come from `<ENV>` or from a file named by `<ENV>_FILE` (Docker/K8s
 * secrets), else from `<SECRETS_DIR>/<env in lower case>` when SECRETS_DIR names a folder
 * (how the compose devnet profile hands its devnet-only keys to the services); they are
 * registered for log redaction and never echoed in errors. Every problem is reported at once,
 * so an operator sees each missing secret in one message instead of one per restart.
 */
import { existsSync, readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { maskUrlsInText, registerSecret } from './secrets';

export class ConfigError extends Error {
  /** Every problem this error reports (one, unless it gathers several settings' errors). */
  readonly problems: readonly string[];

  constructor(message: string, problems?: readonly string[]) {
    super(message);
    this.name = 'ConfigError';
    this.problems = problems ?? [message];
  }
}

export interface Setting<T> {
  /** Environment variable that sets it (also the name used in error messages). */
  env: string;
  description: string;
  /** Used when neither the environment nor the file sets it; no default means required. */
  default?: T;
  /** Secret: read from `<env>` or the file named by `<env>_FILE`, redacted from logs. */
  secret?: boolean;
  /**
   * Read from the environment only: it governs how the config file and secrets are found, so it
   * is used before any file is read, and a config file key for it would be ignored.
   */
  envOnly?: boolean;
  /** Parses the raw text (environment) or the JSON value (config file). */
  parse(raw: unknown): T;
}

type Parsed<S> = { [K in keyof S]: S[K] extends Setting<infer T> ? T : never };

function fail(reason: string): never {
  throw new ConfigError(reason);
}

/** `{ default }` only when there is one: a setting without a `default` key is required. */
function withDefault<T>(def: T | undefined): { default?: T } {
  return def === undefined ? {} : { default: def };
}

/** Setting constructors. `parse` throws a plain reason; the loader adds the setting's name. */
export const settings = {
  /** Without `def` the setting is required. */
  string(env: string, description: string, def?: string): Setting<string> {
    return {
      env,
      description,
      ...withDefault(def),
      parse: (raw) => (typeof raw === 'string' ? raw : fail('must be a string')),
    };
  },
  /** A required secret of at least `minLength` characters (a short shared secret is guessable). */
  secret(env: string, description: string, minLength = 1): Setting<string> {
    return {
      env,
      description,
      secret: true,
      parse: (raw) => {
        if (typeof raw !== 'string' || raw.length === 0) return fail('must be a non-empty string');
        return raw.length >= minLength ? raw : fail(`must be at least ${minLength} characters`);
      },
    };
  },
  /** An optional secret; when set, at least `minLength` characters. */
  optionalSecret(env: string, description: string, minLength = 1): Setting<string | undefined> {
    return {
      env,
      description,
      secret: true,
      default: undefined,
      parse: (raw) => {
        if (typeof raw !== 'string' || !raw) return undefined;
        return raw.length >= minLength ? raw : fail(`must be at least ${minLength} characters`);
      },
    };
  },
  /** With `def` undefined the setting is required. */
  int(env: string, description: string, def: number | undefined, range: [number, number]): Setting<number> {
    return {
      env,
      description,
      ...withDefault(def),
      parse: (raw) => {
        const n =
          typeof raw === 'number' ? raw : typeof raw === 'string' && /^-?\d+$/.test(raw.trim()) ? Number(raw) : NaN;
        if (!Number.isSafeInteger(n) || n < range[0] || n > range[1])
          fail(`must be an integer in ${range[0]}..${range[1]}`);
        return n;
      },
    };
  },
  /**
   * A plain decimal (`5000`, `0.5`; negative too when `signed`), kept as its text so that amounts
   * stay exact; at most 18 decimals and at most `max`. Empty, the default: off (a limit not set).
   * A JSON number in the config file is read as its decimal text.
   */
  optionalDecimal(env: string, description: string, opts: { signed?: boolean; max?: number } = {}): Setting<string> {
    return {
      env,
      description,
      default: '',
      parse: (raw) => {
        const text = typeof raw === 'number' && Number.isFinite(raw) ? String(raw) : raw;
        if (typeof text !== 'string') return fail('must be a decimal number');
        const value = text.trim();
        if (value === '') return '';
        if (!/^-?[0-9]+(\.[0-9]{1,18})?$/.test(value))
          fail(`must be a decimal number${opts.signed ? '' : ' ≥ 0'} (at most 18 decimals), or empty for off`);
        if (!opts.signed && value.startsWith('-')) fail('must not be negative');
        if (opts.max !== undefined && Number(value) > opts.max) fail(`must be at most ${opts.max}`);
        return value;
      },
    };
  },
  bool(env: string, description: string, def: boolean): Setting<boolean> {
    return {
      env,
      description,
      default: def,
      parse: (raw) => {
        if (typeof raw === 'boolean') return raw;
        if (raw === 'true' || raw === '1') return true;
        if (raw === 'false' || raw === '0') return false;
        return fail('must be true or false');
      },
    };
  },
  oneOf<T extends string>(env: string, description: string, def: T, values: readonly T[]): Setting<T> {
    return {
      env,
      description,
      default: def,
      parse: (raw) => (values.includes(raw as T) ? (raw as T) : fail(`must be one of ${values.join(', ')}`)),
    };
  },
  /**
   * A comma-separated list (a JSON array in the config file), items trimmed, empty ones dropped;
   * `check` refuses (throwing ConfigError) or normalises the items.
   */
  list(
    env: string,
    description: string,
    def: string[],
    check: (items: string[]) => string[] = (items) => items,
  ): Setting<string[]> {
    return {
      env,
      description,
      default: def,
      parse: (raw) => {
        const items = Array.isArray(raw) ? raw.map(String) : typeof raw === 'string' ? raw.split(',') : undefined;
        if (!items) return fail('must be a comma-separated list');
        return check(items.map((item) => item.trim()).filter(Boolean));
      },
    };
  },
  /** Without `def` the setting is required. */
  url(env: string, description: string, def?: string, protocols?: readonly string[]): Setting<string> {
    return {
      env,
      description,
      ...withDefault(def),
      parse: (raw) => {
        if (typeof raw !== 'string') return fail('must be a URL');
        let u: URL;
        try {
          u = new URL(raw);
        } catch {
          return fail('must be a URL');
        }
        if (protocols && !protocols.includes(u.protocol.replace(/:$/, ''))) fail(`must use ${protocols.join(' or ')}`);
        return raw;
      },
    };
  },
  /** Any JSON value checked by `check` (e.g. an ajv validator); env value is JSON text. */
  json<T>(env: string, description: string, def: T | undefined, check: (value: unknown) => T): Setting<T> {
    return {
      env,
      description,
      ...withDefault(def),
      parse: (raw) => {
        let value = raw;
        if (typeof raw === 'string') {
          try {
            value = JSON.parse(raw);
          } catch {
            return fail('must be valid JSON');
          }
        }
        return check(value);
      },
    };
  },
};

export interface ConfigSources {
  env?: NodeJS.ProcessEnv;
  /** Parsed config file; by default read from the path in `CONFIG_FILE`, if set. */
  file?: Record<string, unknown>;
}

/** Blocks the (starting) process for `ms` without spinning: config loading is synchronous. */
function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/**
 * Waits up to CONFIG_WAIT_SECONDS for CONFIG_FILE to appear: in the compose devnet profile the
 * services start before the devnet has written its chains file.
 */
const waitedFor = new Set<string>();

function waitForFile(file: string, env: NodeJS.ProcessEnv): void {
  const seconds = Number(env.CONFIG_WAIT_SECONDS ?? 0);
  // Once per file and process: a service loading several layers of settings waits only once.
  if (!(seconds > 0) || existsSync(file) || waitedFor.has(file)) return;
  waitedFor.add(file);
  process.stderr.write(`waiting up to ${seconds} s for CONFIG_FILE ${file}\n`);
  const deadline = Date.now() + seconds * 1000;
  while (!existsSync(file) && Date.now() < deadline) sleepSync(250);
}

/** The parsed CONFIG_FILE (waiting for it per CONFIG_WAIT_SECONDS); {} when CONFIG_FILE is unset. */
export function readConfigFile(env: NodeJS.ProcessEnv = process.env): Record<string, unknown> {
  const file = env.CONFIG_FILE;
  if (!file) return {};
  waitForFile(file, env);
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    throw new ConfigError(`CONFIG_FILE: cannot read ${file}`);
  }
  try {
    const parsed: unknown = JSON.parse(text);
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error();
    return parsed as Record<string, unknown>;
  } catch {
    throw new ConfigError(`CONFIG_FILE: ${file} is not a JSON object`);
  }
}

function readSecretFile(envName: string, file: string): string {
  try {
    return readFileSync(file, 'utf8').trim();
  } catch {
    throw new ConfigError(`${envName}_FILE: cannot read ${file}`);
  }
}

/**
 * The file a secret is read from: `<ENV>_FILE`, else SECRETS_DIR's `<env in lower case>` when
 * the folder holds one; undefined when `<ENV>` itself is set (it wins) or there is no file.
 */
function secretFile(envName: string, env: NodeJS.ProcessEnv): string | undefined {
  if (env[envName] !== undefined && env[envName] !== '') return undefined;
  const named = env[`${envName}_FILE`];
  if (named) return named;
  const dir = env.SECRETS_DIR;
  if (!dir) return undefined;
  const file = path.join(dir, envName.toLowerCase());
  return existsSync(file) ? file : undefined;
}

/**
 * Reads a secret setting's file again, for a secret that may be replaced while the service runs
 * (a token's PIN changed on the token: the operator rewrites the file). Undefined when the
 * secret does not come from a file; the reader resolves undefined when the file cannot be read.
 * A value read is registered for redaction like the first.
 */
export function secretFileReader(
  envName: string,
  env: NodeJS.ProcessEnv = process.env,
): (() => Promise<string | undefined>) | undefined {
  const file = secretFile(envName, env);
  if (file === undefined) return undefined;
  return async () => {
    try {
      const value = (await readFile(file, 'utf8')).trim();
      if (value.length > 0) registerSecret(value);
      return value;
    } catch {
      return undefined;
    }
  };
}

/** One setting's value, or a ConfigError naming it. */
function loadSetting(
  name: string,
  s: Setting<unknown>,
  env: NodeJS.ProcessEnv,
  file: Record<string, unknown>,
): unknown {
  let raw: unknown = env[s.env];
  if ((raw === undefined || raw === '') && s.secret) {
    const file = secretFile(s.env, env);
    raw = file === undefined ? undefined : readSecretFile(s.env, file);
  }
  if ((raw === undefined || raw === '') && !s.envOnly) raw = file[name];
  if (raw === undefined) {
    if ('default' in s) return s.default;
    throw new ConfigError(`${s.env} (${name}): required: ${s.description}`);
  }
  let value: unknown;
  try {
    value = s.parse(raw);
  } catch (err) {
    const reason = err instanceof ConfigError ? err.message : 'invalid value';
    // A secret's value is never echoed; other values are, to help the operator, with the
    // credentials, path and query of any URL in them masked (a password in REDIS_URL, a hosted
    // node's key in the path or query of an rpcUrl in CHAINS).
    const value =
      typeof raw === 'string'
        ? JSON.stringify(maskUrlsInText(raw).slice(0, 80))
        : maskUrlsInText(JSON.stringify(raw) ?? String(raw));
    const shown = s.secret ? '' : `, got ${value}`;
    throw new ConfigError(`${s.env} (${name}): ${reason}${shown}`);
  }
  if (s.secret && typeof value === 'string') registerSecret(value);
  return value;
}

/** Throws one ConfigError listing every message (one per line), if there is any. */
export function throwConfigErrors(messages: readonly string[]): void {
  const unique = [...new Set(messages)];
  if (unique.length === 1) throw new ConfigError(unique[0]!);
  if (unique.length > 1) throw new ConfigError(`${unique.length} problems:\n  ${unique.join('\n  ')}`, unique);
}

/**
 * Loads every setting of `spec`. Precedence: environment (`<ENV>`, then `<ENV>_FILE` and
 * SECRETS_DIR for secrets), then the config file (key = the setting's name in `spec`), then
 * the default. Throws one ConfigError naming every missing or invalid setting.
 */
export function loadConfig<S extends Record<string, Setting<unknown>>>(
  spec: S,
  sources: ConfigSources = {},
): Parsed<S> {
  const env = sources.env ?? process.env;
  const problems: string[] = [];
  let file: Record<string, unknown> = {};
  try {
    file = sources.file ?? readConfigFile(env);
  } catch (err) {
    // Reported with the rest: the settings the file would have given then show up as missing too.
    if (!(err instanceof ConfigError)) throw err;
    problems.push(err.message);
  }
  const out: Record<string, unknown> = {};
  for (const [name, s] of Object.entries(spec)) {
    try {
      out[name] = loadSetting(name, s, env, file);
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err;
      problems.push(...err.problems);
    }
  }
  throwConfigErrors(problems);
  return out as Parsed<S>;
}

/**
 * A setting's default as JSON text, for `--help` and the generated docs: bigint defaults (fee
 * and amount bounds) are written as their decimal digits, which JSON.stringify alone refuses.
 */
export function defaultText(value: unknown): string {
  return JSON.stringify(value, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v)) ?? 'undefined';
}

/** One line per setting (env, default, description): for `--help` output and docs. */
export function describeConfig(spec: Record<string, Setting<unknown>>): string[] {
  return Object.entries(spec).map(([name, s]) => {
    const def = s.secret ? 'secret' : 'default' in s ? `default ${defaultText(s.default)}` : 'required';
    return `${s.env} (${name}; ${def}): ${s.description}`;
  });
}
