/**
 * Operator endpoints: `/healthz` (the process is alive), `/readyz` (its dependencies answer:
 * each check must resolve within 1 s) and `/metrics` (Prometheus text).
 */
import { Router } from 'express';
import type { Registry } from 'prom-client';
import { checkReadiness, type ReadinessCheck } from '../readiness';

export function healthRoutes(opts: { checks: Record<string, ReadinessCheck>; registry?: Registry }): Router {
  const router = Router();
  router.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  router.get('/readyz', async (_req, res) => {
    const report = await checkReadiness(opts.checks);
    res.status(report.status === 'ok' ? 200 : 503).json(report);
  });
  if (opts.registry) {
    const registry = opts.registry;
    router.get('/metrics', async (_req, res) => {
      res.set('Content-Type', registry.contentType).send(await registry.metrics());
    });
  }
  return router;
}
