/**
 * Which metrics and labels a PromQL expression names, read with the Prometheus project's own
 * PromQL grammar (@prometheus-io/lezer-promql), and whether a set of scraped services exports
 * them: for the alert rules' and the dashboard's test. A query naming a series nobody exports
 * is silently empty in Prometheus: an alert that can never fire.
 */
import { parser } from '@prometheus-io/lezer-promql';

export interface Selector {
  metric: string;
  /** Labels its matchers name. */
  labels: string[];
}

export interface PromqlNames {
  selectors: Selector[];
  /** Labels of `by`, `without`, `on`, `ignoring`, `group_left/right`. */
  groupingLabels: string[];
}

/** The names in `expr`; throws on a syntax error. */
export function promqlNames(expr: string): PromqlNames {
  const tree = parser.parse(expr);
  const text = (from: number, to: number) => expr.slice(from, to);
  const selectors: Selector[] = [];
  const groupingLabels: string[] = [];
  const c = tree.cursor();
  do {
    if (c.type.isError) throw new Error(`PromQL syntax error at ${c.from}: ${expr}`);
    if (c.name === 'VectorSelector') {
      const node = c.node;
      const id = node.getChild('Identifier');
      const labels: string[] = [];
      const matchers = node.getChild('LabelMatchers');
      if (matchers) {
        const m = matchers.cursor();
        do if (m.name === 'LabelName') labels.push(text(m.from, m.to));
        while (m.next() && m.from < matchers.to);
      }
      if (id) selectors.push({ metric: text(id.from, id.to), labels });
    } else if (c.name === 'GroupingLabels') {
      const node = c.node;
      for (const label of node.getChildren('LabelName')) groupingLabels.push(text(label.from, label.to));
    }
  } while (c.next());
  return { selectors, groupingLabels };
}

/** Metric family → the labels seen on its samples, from Prometheus text expositions. */
export type Exported = Map<string, { type: string; labels: Set<string> }>;

export function exportedNames(expositions: string[]): Exported {
  const out: Exported = new Map();
  for (const text of expositions) {
    for (const m of text.matchAll(/^# TYPE (\S+) (\S+)$/gm))
      if (!out.has(m[1]!)) out.set(m[1]!, { type: m[2]!, labels: new Set() });
    for (const line of text.split('\n')) {
      if (line === '' || line.startsWith('#')) continue;
      const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? /.exec(line);
      if (!m) continue;
      const family = familyOf(m[1]!, out);
      if (!family) continue;
      for (const l of (m[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="/g)) family.labels.add(l[1]!);
    }
  }
  return out;
}

function familyOf(name: string, exported: Exported) {
  const direct = exported.get(name);
  if (direct) return direct;
  const base = /^(.*)_(bucket|sum|count)$/.exec(name)?.[1];
  const family = base === undefined ? undefined : exported.get(base);
  return family && (family.type === 'histogram' || family.type === 'summary') ? family : undefined;
}

/** Labels Prometheus adds to every scraped series. */
const TARGET_LABELS = ['job', 'instance'];

/** What `expr` names that `exported` lacks, one sentence each (empty: all of it is exported). */
export function unexportedNames(expr: string, exported: Exported): string[] {
  const { selectors, groupingLabels } = promqlNames(expr);
  const problems: string[] = [];
  const known = new Set(TARGET_LABELS);
  for (const s of selectors) {
    const family = familyOf(s.metric, exported);
    if (!family) {
      problems.push(`metric ${s.metric} is not exported by any service`);
      continue;
    }
    const labels = new Set([...family.labels, ...TARGET_LABELS, ...(s.metric.endsWith('_bucket') ? ['le'] : [])]);
    for (const l of labels) known.add(l);
    for (const l of s.labels) if (!labels.has(l)) problems.push(`label ${l} is not on ${s.metric}`);
  }
  for (const l of groupingLabels)
    if (!known.has(l)) problems.push(`label ${l} (by/on/ignoring) is on none of the metrics of the expression`);
  return problems;
}
