/**
 * Development only: seeds the key given in DEV_API_KEY for the integrator `dev`, so that a
 * local stack is usable without running the key CLI. Idempotent; the whitelist is replaced
 * by DEV_API_KEY_WHITELIST at every start. Never set DEV_API_KEY in production.
 */
import type { ApiKeyStore } from './api-key-store';
import { hashApiKey } from './api-key-store';

export const DEV_INTEGRATOR_ID = 'dev';

export async function seedDevKey(
  store: ApiKeyStore,
  apiKey: string,
  whitelist: readonly string[],
  now = Date.now(),
): Promise<void> {
  const existing = await store.getIntegrator(DEV_INTEGRATOR_ID);
  await store.putIntegrator({
    id: DEV_INTEGRATOR_ID,
    name: existing?.name ?? 'Development',
    whitelist: whitelist.map((a) => a.toLowerCase()),
    chains: existing?.chains ?? [],
    rateLimit: existing?.rateLimit ?? { requests: 0, windowSeconds: 0 },
    disabled: false,
    ...(existing?.originRate ? { originRate: existing.originRate } : {}),
  });
  // keyId: a prefix of the key's HASH (the key itself may be short and must not leak).
  await store.storeKey(apiKey, {
    integratorId: DEV_INTEGRATOR_ID,
    keyId: `dev_${hashApiKey(apiKey).slice(0, 8)}`,
    createdAt: now,
    disabled: false,
  });
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
): { ready: Promise<boolean>; stop: () => void } {
  const hash = hashApiKey(apiKey);
  let running = false;
  const tick = async (): Promise<void> => {
    if (running) return;
    running = true;
    try {
      if (!(await store.lookupHash(hash))) {
        await seedDevKey(store, apiKey, whitelist);
        opts.onReseed();
      }
    } catch (err) {
      opts.onError(err);
    } finally {
      running = false;
    }
  };
  const timer = setInterval(() => void tick(), opts.intervalMs);
  timer.unref();
  // At start the whitelist is replaced whatever is stored; ready says whether that worked
  // (false while Redis is unreachable: the periodic check seeds it once Redis answers).
  const ready = seedDevKey(store, apiKey, whitelist).then(
    () => true,
    (err: unknown) => {
      opts.onError(err);
      return false;
    },
  );
  return { ready, stop: () => clearInterval(timer) };
}
