/**
 * Development only: seeds the key given in DEV_API_KEY for the integrator `dev`, so that a
 * local stack is usable without running the key CLI. Idempotent; the whitelist is replaced
 * by DEV_API_KEY_WHITELIST at every start. Never set DEV_API_KEY in production.
 *
 * An operator's decision stays: a revoked development key is not seeded again (its hash is
 * among the revoked), and a disabled key or `dev` integrator stays disabled across restarts.
 * Only data loss (a Redis without its data) brings the key back, as on the first start.
 */
import type { ApiKeyStore } from './api-key-store';
import { hashApiKey } from './api-key-store';

export const DEV_INTEGRATOR_ID = 'dev';

export async function seedDevKey(
  store: ApiKeyStore,
  apiKey: string,
  whitelist: readonly string[],
  now = Date.now(),
): Promise<'seeded' | 'revoked'> {
  const hash = hashApiKey(apiKey);
  if (await store.isRevoked(hash)) return 'revoked';
  const existing = await store.getIntegrator(DEV_INTEGRATOR_ID);
  await store.putIntegrator({
    id: DEV_INTEGRATOR_ID,
    name: existing?.name ?? 'Development',
    whitelist: whitelist.map((a) => a.toLowerCase()),
    chains: existing?.chains ?? [],
    rateLimit: existing?.rateLimit ?? { requests: 0, windowSeconds: 0 },
    disabled: existing?.disabled ?? false,
    ...(existing?.originRate ? { originRate: existing.originRate } : {}),
  });
  const key = (await store.lookupHash(hash))?.key;
  // keyId: a prefix of the key's HASH (the key itself may be short and must not leak).
  await store.storeKey(apiKey, {
    integratorId: DEV_INTEGRATOR_ID,
    keyId: `dev_${hash.slice(0, 8)}`,
    createdAt: key?.createdAt ?? now,
    disabled: key?.disabled ?? false,
  });
  return 'seeded';
}

/**
 * Seeds the development key now, and again whenever it has gone (a private Redis restarted
 * without its data, a FLUSHALL), checking every `intervalMs`. Returns a stop function.
 * Redis being unreachable is not "gone": the check simply retries at the next tick.
 */
export function keepDevKeySeeded(
  store: ApiKeyStore,
  apiKey: string,
  whitelist: readonly string[],
  opts: { intervalMs: number; onReseed: () => void; onError: (err: unknown) => void },
): { ready: Promise<'seeded' | 'revoked' | false>; stop: () => void } {
  const hash = hashApiKey(apiKey);
  // At start the whitelist is replaced whatever is stored; ready says what happened ('revoked':
  // left alone; false while Redis is unreachable: the periodic check seeds it once Redis answers).
  const ready = seedDevKey(store, apiKey, whitelist).then(
    (outcome) => outcome,
    (err: unknown): false => {
      opts.onError(err);
      return false;
    },
  );
  // A check skips while the start's seed or the previous check is still writing: the seed
  // writes the integrator before the key, so a check in between would see the key missing and
  // seed (and report) it a second time.
  let running = true;
  void ready.finally(() => (running = false));
  const tick = async (): Promise<void> => {
    if (running) return;
    running = true;
    try {
      if (!(await store.lookupHash(hash)) && (await seedDevKey(store, apiKey, whitelist)) === 'seeded') opts.onReseed();
    } catch (err) {
      opts.onError(err);
    } finally {
      running = false;
    }
  };
  const timer = setInterval(() => void tick(), opts.intervalMs);
  timer.unref();
  return { ready, stop: () => clearInterval(timer) };
}
