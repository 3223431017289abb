/**
 * The Helm chart (deploy/helm/pmm-quote-service) as its tests see it: `helm template` of its value
 * sets (ci/*.yaml: minimal, production on Sentinel, every option on) and of `--set` options, what
 * helm refuses, and the parts of a rendering the tests look up. Helm 4.1.4 comes from the npm
 * registry (helm-binary.ts). The chart's tests, one concern a file: helm-chart.test.ts (the parts
 * each value renders), helm-chart-policies.test.ts, helm-chart-environment.test.ts (each process's
 * settings, secrets and Redis user) and helm-chart-risk-pod.test.ts.
 */
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parse as parseYaml, parseAllDocuments } from 'yaml';
import type { K8sObject, NetworkAdmission, NetworkPolicyPeer } from './chart-policies';
import { helmBinary } from './helm-binary';

export const ROOT = path.resolve(__dirname, '..', '..', '..', '..');
export const CHART = path.join(ROOT, 'deploy', 'helm', 'pmm-quote-service');
export const ALERTS_FILE = path.join(ROOT, 'deploy', 'prometheus', 'alerts.yml');
/** The value sets of ci/, sorted. */
export const VALUE_SETS = readdirSync(path.join(CHART, 'ci'))
  .filter((f) => f.endsWith('.yaml'))
  .sort();
const helm = helmBinary(ROOT);

export function runHelm(args: string[]): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(helm, args, { cwd: ROOT, encoding: 'utf8' });
  if (r.error) throw r.error;
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** The objects `helm template` renders from the chart with these values files and `--set` options. */
export function render(valueSet: string, ...set: string[]): K8sObject[] {
  const r = runHelm(['template', 'pmm', CHART, '-f', path.join(CHART, 'ci', valueSet), ...set]);
  if (r.status !== 0) throw new Error(`helm template ${valueSet} ${set.join(' ')} failed:\n${r.stderr}`);
  return parseAllDocuments(r.stdout)
    .map((d) => {
      if (d.errors.length) throw new Error(`helm rendered invalid YAML: ${d.errors[0]!.message}`);
      return d.toJS() as K8sObject | null;
    })
    .filter((o): o is K8sObject => o !== null);
}

const renderings = new Map<string, K8sObject[]>();
/** A value set's rendering, made once per test file: a test that changes it works on a structuredClone. */
export function rendered(set: string): K8sObject[] {
  if (!renderings.has(set)) renderings.set(set, render(set));
  return renderings.get(set)!;
}

/** Why helm refuses these values (its standard error), or '' when it renders them. */
export function refusal(...set: string[]): string {
  const r = runHelm(['template', 'pmm', CHART, '-f', path.join(CHART, 'ci', 'minimal-values.yaml'), ...set]);
  return r.status === 0 ? '' : r.stderr;
}

export const byKind = (objects: K8sObject[], kind: string) => objects.filter((o) => o.kind === kind);
export const named = (objects: K8sObject[], kind: string, suffix: string) =>
  objects.find((o) => o.kind === kind && o.metadata.name.endsWith(suffix));

interface SelectorValues {
  namespaceSelector?: { matchLabels?: object; matchExpressions?: unknown[] };
  podSelector?: object;
}
interface ValueSet {
  monitoring?: { prometheusRule?: { enabled?: boolean } };
  networkPolicy?: {
    prometheus?: SelectorValues;
    probesFrom?: NetworkPolicyPeer[];
    public?: { ingressController?: SelectorValues; from?: NetworkPolicyPeer[]; fromAnywhere?: boolean };
  };
}
export const valueSet = (set: string) => parseYaml(readFileSync(path.join(CHART, 'ci', set), 'utf8')) as ValueSet;

/** The peer of a value's two label selectors, none when they are unset (values.yaml's networkPolicy). */
const selectorPeers = (s: SelectorValues | undefined): NetworkPolicyPeer[] =>
  s?.namespaceSelector && Object.keys(s.namespaceSelector).length ? [s as NetworkPolicyPeer] : [];

/** What a value set's networkPolicy admits (its defaults, values.yaml's, admit nothing). */
export function admissionOf(set: string): NetworkAdmission {
  const np = valueSet(set).networkPolicy ?? {};
  return {
    prometheus: selectorPeers(np.prometheus),
    probes: np.probesFrom ?? [],
    public: np.public?.fromAnywhere
      ? 'anywhere'
      : [...selectorPeers(np.public?.ingressController), ...(np.public?.from ?? [])],
  };
}

/** Every component of the chart with every option on (three chains, ledgers, the risk pod), sorted: each reaches Redis and has its own policy. */
export const COMPONENTS = [
  'gateway',
  'indexer-4663',
  'indexer-56',
  'indexer-8453',
  'ledger-4663',
  'ledger-56',
  'ledger-8453',
  'risk',
  'settlement',
  'signer',
];
