/** Polling for a condition in tests. */

/** Resolves once `cond` holds (checked every `intervalMs`); rejects after `timeoutMs` with `what`. */
export async function until(
  cond: () => boolean | Promise<boolean>,
  timeoutMs = 5_000,
  what = 'condition',
  intervalMs = 10,
): Promise<void> {
  const start = Date.now();
  while (!(await cond())) {
    if (Date.now() - start > timeoutMs) throw new Error(`${what} not met after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}
