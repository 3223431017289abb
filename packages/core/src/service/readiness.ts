/**
 * The readiness rule of every service's `/readyz`: each check must resolve within 1 s; the
 * answer names each check's outcome. Framework-free, so the Express shell (healthRoutes) and
 * the indexer's bare node:http operator server give the same answer.
 */

/** Resolves when a dependency answers; rejects (with a short reason) when it does not. */
export type ReadinessCheck = () => Promise<void>;

export interface ReadinessReport {
  status: 'ok' | 'unavailable';
  /** Per check: `ok` or `fail: <reason>`. */
  checks: Record<string, string>;
}

const CHECK_TIMEOUT_MS = 1_000;

function outcome(check: ReadinessCheck): Promise<string> {
  return new Promise((resolve) => {
    const t = setTimeout(() => resolve('fail: timeout'), CHECK_TIMEOUT_MS);
    check().then(
      () => {
        clearTimeout(t);
        resolve('ok');
      },
      (err: unknown) => {
        clearTimeout(t);
        resolve(`fail: ${err instanceof Error ? err.message : 'error'}`);
      },
    );
  });
}

/** Runs every check at once; `status` is `ok` only when all are. */
export async function checkReadiness(checks: Record<string, ReadinessCheck>): Promise<ReadinessReport> {
  const names = Object.keys(checks);
  const results = await Promise.all(names.map((n) => outcome(checks[n]!)));
  return {
    status: results.every((r) => r === 'ok') ? 'ok' : 'unavailable',
    checks: Object.fromEntries(names.map((n, i) => [n, results[i]!])),
  };
}
