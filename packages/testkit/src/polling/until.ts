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

/**
 * Whether `promise` settles within `ms`: true if it does, false if the time ran out first. The
 * timer is cleared either way (a bare race with a sleep leaves it running, and a timer that
 * outlives a file's tests keeps its jest worker from exiting).
 */
export async function settlesWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
  try {
    return await Promise.race([promise.then(() => true), timedOut]);
  } finally {
    clearTimeout(timer);
  }
}
