// Keeps one part of the local stack running: when its process dies unexpectedly, it is logged
// and started again after a backoff (doubling from minMs to maxMs; back to minMs once the part
// has stayed up for stableMs), while the other parts keep serving. stop() ends it for good:
// SIGTERM, then SIGKILL after killAfterMs, and resolves once the process is gone.
import { spawn } from 'node:child_process';

/**
 * @param {object} part
 * @param {string} part.name                    shown in the log lines
 * @param {string} part.command
 * @param {string[]} part.args
 * @param {import('node:child_process').SpawnOptions} [part.options]
 * @param {(child: import('node:child_process').ChildProcess) => Promise<void>} [part.ready]
 *        resolves once a (re)started process is ready (e.g. answers /readyz)
 * @param {(line: string) => void} part.log
 * @param {{ minMs?: number, maxMs?: number, stableMs?: number, killAfterMs?: number }} [part.timing]
 * @param {() => boolean} [part.shuttingDown]
 *        true once the whole stack is stopping: a part that exits then is neither reported nor
 *        restarted (Ctrl-C reaches every process of the terminal at once, before stop() does)
 */
export function supervise(part) {
  const { minMs = 500, maxMs = 15_000, stableMs = 30_000, killAfterMs = 8_000 } = part.timing ?? {};
  let child;
  let stopped = false;
  let delay = minMs;
  let restarts = 0;
  let timer;

  const launch = () => {
    const startedAt = Date.now();
    child = spawn(part.command, part.args, part.options ?? {});
    child.once('exit', (code, signal) => {
      if (stopped || part.shuttingDown?.()) return;
      if (Date.now() - startedAt >= stableMs) delay = minMs;
      restarts++;
      part.log(
        `${part.name} exited unexpectedly (${signal ?? `code ${code}`}); restarting in ${(delay / 1000).toFixed(1)} s (restart ${restarts})`,
      );
      timer = setTimeout(() => {
        timer = undefined;
        if (stopped || part.shuttingDown?.()) return;
        launch();
        part
          .ready?.(child)
          .then(() => !stopped && part.log(`${part.name} restarted and ready`))
          .catch((err) => part.log(`${part.name} restarted but not ready: ${err?.message ?? err}`));
      }, delay);
      delay = Math.min(delay * 2, maxMs);
    });
    return child;
  };

  launch();
  return {
    name: part.name,
    get child() {
      return child;
    },
    get restarts() {
      return restarts;
    },
    /** Resolves once the first process is ready. */
    ready: () => part.ready?.(child) ?? Promise.resolve(),
    /** Stops the part for good; resolves when its process has exited. */
    stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      const c = child;
      if (!c || c.exitCode !== null || c.signalCode !== null) return Promise.resolve();
      return new Promise((resolve) => {
        const killer = setTimeout(() => c.kill('SIGKILL'), killAfterMs);
        c.once('exit', () => {
          clearTimeout(killer);
          resolve();
        });
        c.kill('SIGTERM');
      });
    },
  };
}
