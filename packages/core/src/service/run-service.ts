/**
 * The one process shell of every service's `main.ts`: the same `--help`, start-up, error
 * printing, exit codes, unhandled-rejection logging, signal handling and shutdown.
 *
 * Exit codes: 0 after a clean drain (SIGTERM/SIGINT) or `--help`; 1 when start-up fails
 * (configuration or otherwise) or on an uncaught exception; a second signal during the drain
 * exits 1 at once.
 */
import { ConfigError, describeConfig, type Setting } from '../settings/config';
import { createLogger, type Logger } from './logger';
import { shutdownOnSignals, type Served } from '../http/serve';
import type { LOG_LEVELS } from '../settings/shared-settings';

/** What a started service hands back: the servers to drain, then what to close after them. */
export interface RunningService {
  served: Served[];
  /** Stops background work and closes Redis and other clients; called after the servers drained. */
  close(): Promise<void>;
}

export interface ServiceDefinition<C extends { logLevel: (typeof LOG_LEVELS)[number] }> {
  /** The service's name: prefix of printed errors, `service` field of every log line. */
  name: string;
  /** Its settings, printed by `--help`. */
  settings: Record<string, Setting<unknown>>;
  loadConfig(): C;
  start(config: C, logger: Logger): Promise<RunningService>;
}

/**
 * Why start-up failed, for stderr. A ConfigError's message is written to be shown (it names the
 * setting, never a secret's value); any other exception is reported by type only, since its
 * text could quote a secret (it is logged in full through the redacting logger when one exists).
 */
function startFailure(err: unknown): string {
  if (err instanceof ConfigError) return err.message;
  return `unexpected start-up failure (${err instanceof Error ? err.name : typeof err})`;
}

export async function runService<C extends { logLevel: (typeof LOG_LEVELS)[number] }>(
  def: ServiceDefinition<C>,
): Promise<void> {
  if (process.argv.includes('--help')) {
    const lines = describeConfig(def.settings).map((l) => `  ${l}`);
    console.log([`${def.name} settings (environment, or CONFIG_FILE JSON):`, ...lines].join('\n'));
    return;
  }
  let logger: Logger | undefined;
  try {
    const config = def.loadConfig();
    const log = createLogger({ service: def.name, level: config.logLevel });
    logger = log;
    // A rejection nobody awaited is a bug, not a reason to stop serving: logged, not fatal.
    process.on('unhandledRejection', (reason) => log.error('unhandled rejection', { error: reason }));
    process.on('uncaughtException', (err) => {
      log.error('uncaught exception', { error: err });
      process.exit(1);
    });
    const running = await def.start(config, log);
    shutdownOnSignals({ served: running.served, logger: log, cleanup: () => running.close() });
  } catch (err) {
    if (!(err instanceof ConfigError)) logger?.error('start-up failed', { error: err });
    console.error(`${def.name}: cannot start: ${startFailure(err)}`);
    process.exit(1);
  }
}
