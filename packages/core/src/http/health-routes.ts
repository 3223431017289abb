/**
 * Operator endpoints: `/healthz` (the process is alive), `/readyz` (its dependencies answer:
 * each check must resolve within 1 s) and `/metrics` (Prometheus text).
 */
import { Router } from 'express';
import type { Registry } from 'prom-client';

export type ReadinessCheck = () => Promise<void>;

const CHECK_TIMEOUT_MS = 1_000;

function withTimeout(p: Promise<void>): Promise<void> {
  return new Promise((resolve, reject) => {
    const t = setTimeout(() => reject(new Error('timeout')), CHECK_TIMEOUT_MS);
    p.then(
      () => {
        clearTimeout(t);
        resolve();
      },
      (e: unknown) => {
        clearTimeout(t);
        reject(e instanceof Error ? e : new Error(String(e)));
      },
    );
  });
}

export function healthRoutes(opts: { checks: Record<string, ReadinessCheck>; registry?: Registry }): Router {
  const router = Router();
  router.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  router.get('/readyz', async (_req, res) => {
    const results: Record<string, string> = {};
    await Promise.all(
      Object.entries(opts.checks).map(async ([name, check]) => {
        try {
          await withTimeout(check());
          results[name] = 'ok';
        } catch (err) {
          results[name] = `fail: ${err instanceof Error ? err.message : 'error'}`;
        }
      }),
    );
    const ok = Object.values(results).every((r) => r === 'ok');
    res.status(ok ? 200 : 503).json({ status: ok ? 'ok' : 'unavailable', checks: results });
  });
  if (opts.registry) {
    const registry = opts.registry;
    router.get('/metrics', async (_req, res) => {
      res.set('Content-Type', registry.contentType).send(await registry.metrics());
    });
  }
  return router;
}
