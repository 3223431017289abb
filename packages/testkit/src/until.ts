/** Polling for a condition in tests. */

/**
 * Resolves once `cond` gives a truthy value (checked every `intervalMs`), with that value, so a
 * poll can hand back what it found; rejects after `timeoutMs` with `what`.
 */
export async function until<T>(
  cond: () => T | Promise<T>,
  timeoutMs = 5_000,
  what = 'condition',
  intervalMs = 10,
): Promise<Exclude<T, false | null | undefined>> {
  const start = Date.now();
  for (;;) {
    const value = await cond();
    if (value) return value as Exclude<T, false | null | undefined>;
    if (Date.now() - start > timeoutMs) throw new Error(`${what} not met after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}
