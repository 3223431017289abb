/**
 * A per-app prom-client registry (registering a name twice on the global registry throws,
 * and tests build many apps) with Node's default metrics and a `service` label.
 */
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

export interface Metrics {
  registry: Registry;
  counter<L extends string>(name: string, help: string, labelNames: readonly L[]): Counter<L>;
  /** `collect` runs at each scrape, before the gauge is read (a value read from elsewhere). */
  gauge<L extends string>(
    name: string,
    help: string,
    labelNames: readonly L[],
    collect?: (gauge: Gauge<L>) => Promise<void>,
  ): Gauge<L>;
  histogram<L extends string>(name: string, help: string, labelNames: readonly L[], buckets?: number[]): Histogram<L>;
}

/** Latency buckets in seconds, from 0.5 ms to 10 s (the request timeout). */
export const LATENCY_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

export function createMetrics(service: string, opts: { defaultMetrics?: boolean } = {}): Metrics {
  const registry = new Registry();
  registry.setDefaultLabels({ service });
  if (opts.defaultMetrics ?? true) collectDefaultMetrics({ register: registry });
  return {
    registry,
    counter: (name, help, labelNames) => new Counter({ name, help, labelNames, registers: [registry] }),
    gauge: (name, help, labelNames, collect) =>
      new Gauge({
        name,
        help,
        labelNames,
        registers: [registry],
        ...(collect && {
          async collect() {
            await collect(this);
          },
        }),
      }),
    histogram: (name, help, labelNames, buckets = LATENCY_BUCKETS) =>
      new Histogram({ name, help, labelNames, buckets, registers: [registry] }),
  };
}
