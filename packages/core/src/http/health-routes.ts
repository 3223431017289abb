/**
 * The operator routes every service serves, as route-table entries: `/healthz` (the process
 * answers), `/readyz` (every readiness check resolves: 200, else 503 with the report) and,
 * given a registry, `/metrics` (Prometheus text). `guard` (operator-guard.ts) runs first on each:
 * the signer's and the indexers' ports, which serve no console, have no other place for it.
 */
import type { Registry } from 'prom-client';
import { checkReadiness, type ReadinessCheck } from '../service/readiness';
import type { Route, Step } from './route-table';
import { sendBytes, sendJson } from './send-json';

const HEALTHY = Buffer.from(JSON.stringify({ status: 'ok' }));

export interface HealthRoutesOptions {
  checks: Record<string, ReadinessCheck>;
  registry?: Registry;
  /** Runs before `/metrics` is rendered (gauges refreshed at scrape time). */
  beforeMetrics?: Step;
  /** Runs before every route here (the Host and operator-token check). */
  guard?: Step;
}

export function healthRoutes(opts: HealthRoutesOptions): Route[] {
  const routes: Route[] = [
    { path: '/healthz', methods: ['GET', 'HEAD'], steps: [(_req, res) => sendJson(res, 200, HEALTHY)] },
    {
      path: '/readyz',
      methods: ['GET', 'HEAD'],
      steps: [
        (_req, res, next) => {
          checkReadiness(opts.checks).then((report) => sendJson(res, report.status === 'ok' ? 200 : 503, report), next);
        },
      ],
    },
  ];
  const registry = opts.registry;
  if (registry) {
    const render: Step = (_req, res, next) => {
      registry
        .metrics()
        .then((text) => sendBytes(res, 200, Buffer.from(text), { 'Content-Type': registry.contentType }), next);
    };
    routes.push({
      path: '/metrics',
      methods: ['GET', 'HEAD'],
      steps: opts.beforeMetrics ? [opts.beforeMetrics, render] : [render],
    });
  }
  const guard = opts.guard;
  return guard ? routes.map((route) => ({ ...route, steps: [guard, ...route.steps] })) : routes;
}
