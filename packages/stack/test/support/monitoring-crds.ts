/**
 * Shape checks of the Prometheus Operator objects the chart renders (ServiceMonitor and
 * PrometheusRule, monitoring.coreos.com/v1), which no Kubernetes API schema covers: the fields
 * the chart sets, with the types of the operator's CRDs. Returns the problems found.
 */
import type { K8sObject } from './chart-policies';

const isString = (v: unknown): v is string => typeof v === 'string' && v !== '';
const isStringMap = (v: unknown) =>
  v === undefined ||
  (typeof v === 'object' && v !== null && !Array.isArray(v) && Object.values(v).every((x) => typeof x === 'string'));
/** Prometheus durations as the CRDs' pattern has them (e.g. 30s, 1m, 1h30m). */
const DURATION = /^(0|(([0-9]+)y)?(([0-9]+)w)?(([0-9]+)d)?(([0-9]+)h)?(([0-9]+)m)?(([0-9]+)s)?(([0-9]+)ms)?)$/;

export function checkMonitoringCrd(o: K8sObject): string[] {
  const at = `${o.kind} ${o.metadata.name}`;
  const problems: string[] = [];
  if (o.apiVersion !== 'monitoring.coreos.com/v1') problems.push(`${at}: apiVersion ${o.apiVersion}`);
  if (!isStringMap(o.metadata.labels)) problems.push(`${at}: labels are not strings`);
  const spec = (o.spec ?? {}) as Record<string, unknown>;
  if (o.kind === 'ServiceMonitor') {
    const selector = spec.selector as { matchLabels?: unknown } | undefined;
    if (!selector || !isStringMap(selector.matchLabels))
      problems.push(`${at}: selector.matchLabels is not a map of strings`);
    const endpoints = spec.endpoints as Record<string, unknown>[] | undefined;
    if (!Array.isArray(endpoints) || endpoints.length === 0) problems.push(`${at}: no endpoints`);
    for (const e of endpoints ?? []) {
      if (!isString(e.port)) problems.push(`${at}: an endpoint without a port name`);
      if (e.path !== undefined && !isString(e.path)) problems.push(`${at}: endpoint ${String(e.port)}: path`);
      if (e.interval !== undefined && !(isString(e.interval) && DURATION.test(e.interval)))
        problems.push(`${at}: endpoint ${String(e.port)}: interval ${String(e.interval)}`);
      const auth = e.authorization as { type?: unknown; credentials?: { name?: unknown; key?: unknown } } | undefined;
      if (auth && !(isString(auth.credentials?.name) && isString(auth.credentials?.key)))
        problems.push(`${at}: endpoint ${String(e.port)}: authorization.credentials needs name and key`);
    }
  } else if (o.kind === 'PrometheusRule') {
    const groups = spec.groups as Record<string, unknown>[] | undefined;
    if (!Array.isArray(groups) || groups.length === 0) problems.push(`${at}: no groups`);
    for (const g of groups ?? []) {
      if (!isString(g.name)) problems.push(`${at}: a group without a name`);
      for (const r of (g.rules as Record<string, unknown>[] | undefined) ?? []) {
        const id = String(r.alert ?? r.record);
        if (isString(r.alert) === isString(r.record))
          problems.push(`${at}: rule ${id}: exactly one of alert and record`);
        if (!isString(r.expr)) problems.push(`${at}: rule ${id}: expr is not a string`);
        if (r.for !== undefined && !(isString(r.for) && DURATION.test(r.for))) problems.push(`${at}: rule ${id}: for`);
        if (!isStringMap(r.labels) || !isStringMap(r.annotations))
          problems.push(`${at}: rule ${id}: labels and annotations must be strings`);
      }
    }
  } else {
    problems.push(`${at}: not a Prometheus Operator kind`);
  }
  return problems;
}
