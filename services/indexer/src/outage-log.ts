/**
 * Logging for something that fails repeatedly during an outage (Redis down, node gone): the
 * first failure of a streak at warn, the rest at debug, and one info line when it works
 * again. An outage of a minute at four blocks a second must not write hundreds of warnings.
 */
import type { Logger } from '@pmm/core';

export interface OutageLog {
  /** Reports a failure (warn the first time in a streak, debug after). */
  failed(err: unknown, fields?: Record<string, unknown>): void;
  /** Reports a success; ends a streak with an info line. */
  ok(): void;
}

export function outageLog(log: Logger, message: string): OutageLog {
  let failures = 0;
  return {
    failed(err, fields = {}) {
      failures++;
      const error = err instanceof Error ? err.message : String(err);
      log.log(failures === 1 ? 'warn' : 'debug', message, { ...fields, error });
    },
    ok() {
      if (failures === 0) return;
      log.info(`${message}: recovered`, { failures });
      failures = 0;
    },
  };
}
