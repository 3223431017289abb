/**
 * The rules every rendering of the Helm chart (deploy/helm/pmm-quote-service) must keep, as pure
 * checks of the rendered objects: each returns the violations it finds, empty when the rendering
 * keeps it. helm-chart-policies.test.ts runs them on the chart's value sets and shows each one
 * failing on a rendering that breaks it.
 */
import type { Setting } from '@pmm/core';
import { GATEWAY_SETTINGS } from '@pmm/gateway';
import { INDEXER_SETTINGS, LEDGER_SETTINGS } from '@pmm/indexer';
import { SIGNER_SETTINGS, chainSettings } from '@pmm/signer';

/** A rendered Kubernetes object, as far as these checks read it. */
export interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; labels?: Record<string, string> };
  spec?: Record<string, unknown>;
  data?: Record<string, string>;
}

type Json = Record<string, unknown>;

interface Container {
  name: string;
  image?: string;
  env?: { name: string; value?: string; valueFrom?: unknown }[];
  resources?: { requests?: Json; limits?: Json };
  securityContext?: Json;
  ports?: { name?: string; containerPort: number }[];
  livenessProbe?: { httpGet?: { path: string; port: string | number }; exec?: { command: string[] } };
  readinessProbe?: { httpGet?: { path: string; port: string | number }; exec?: { command: string[] } };
}

interface PodOf {
  owner: K8sObject;
  /** Deployments run for good and are probed; a Job's pod runs to its end. */
  longRunning: boolean;
  spec: Json & { containers: Container[]; initContainers?: Container[]; securityContext?: Json };
  labels: Record<string, string>;
}

/** The pod templates of the workloads among `objects`. */
export function podsOf(objects: K8sObject[]): PodOf[] {
  return objects.flatMap((o): PodOf[] => {
    const spec = o.spec as Json | undefined;
    if (o.kind === 'Deployment' || o.kind === 'StatefulSet' || o.kind === 'DaemonSet') {
      const template = spec?.template as { metadata: { labels: Record<string, string> }; spec: PodOf['spec'] };
      return [{ owner: o, longRunning: true, spec: template.spec, labels: template.metadata.labels }];
    }
    if (o.kind === 'CronJob') {
      const template = ((spec?.jobTemplate as Json).spec as Json).template as {
        metadata: { labels: Record<string, string> };
        spec: PodOf['spec'];
      };
      return [{ owner: o, longRunning: false, spec: template.spec, labels: template.metadata.labels }];
    }
    if (o.kind === 'Pod' || o.kind === 'Job')
      throw new Error(`${o.kind} ${o.metadata.name}: not expected in this chart`);
    return [];
  });
}

function containersOf(pod: PodOf): Container[] {
  return [...(pod.spec.initContainers ?? []), ...pod.spec.containers];
}

const where = (pod: PodOf, c: Container) => `${pod.owner.kind} ${pod.owner.metadata.name}, container ${c.name}`;

/** Every container has CPU and memory requests and limits. */
export function checkResources(objects: K8sObject[]): string[] {
  return podsOf(objects).flatMap((pod) =>
    containersOf(pod).flatMap((c) =>
      (['requests', 'limits'] as const).flatMap((kind) =>
        ['cpu', 'memory']
          .filter((r) => c.resources?.[kind]?.[r] === undefined)
          .map((r) => `${where(pod, c)}: no ${r} ${kind}`),
      ),
    ),
  );
}

/**
 * Every container runs as a non-root user, on a read-only root filesystem, without capabilities
 * or a way to gain privileges, under the runtime's default seccomp profile.
 */
export function checkHardening(objects: K8sObject[]): string[] {
  return podsOf(objects).flatMap((pod) => {
    const podCtx = pod.spec.securityContext ?? {};
    return containersOf(pod).flatMap((c) => {
      const ctx = c.securityContext ?? {};
      const pick = (key: string) => (ctx[key] !== undefined ? ctx[key] : podCtx[key]);
      const problems: string[] = [];
      if (pick('runAsNonRoot') !== true) problems.push('runAsNonRoot is not true');
      const uid = pick('runAsUser');
      if (uid === undefined || uid === 0) problems.push(`runs as user ${String(uid ?? "the image's")}`);
      if (pick('runAsGroup') === 0) problems.push('runs as group 0');
      if (ctx.readOnlyRootFilesystem !== true) problems.push('root filesystem is writable');
      if (ctx.allowPrivilegeEscalation !== false) problems.push('may gain privileges');
      if (ctx.privileged === true) problems.push('is privileged');
      const caps = ctx.capabilities as { drop?: string[]; add?: string[] } | undefined;
      if (!caps?.drop?.includes('ALL')) problems.push('does not drop ALL capabilities');
      if (caps?.add?.length) problems.push(`adds capabilities ${caps.add.join(', ')}`);
      const seccomp = pick('seccompProfile') as { type?: string } | undefined;
      if (seccomp?.type !== 'RuntimeDefault') problems.push('seccomp profile is not RuntimeDefault');
      return problems.map((p) => `${where(pod, c)}: ${p}`);
    });
  });
}

/**
 * Every Deployment's containers are probed: liveness on /healthz, readiness on /readyz, on a
 * declared port. A container that serves nothing (no port: the risk command's pod, which waits
 * for `kubectl exec`) has instead a readiness probe that runs a command (that it can do its work).
 */
export function checkProbes(objects: K8sObject[]): string[] {
  return podsOf(objects)
    .filter((pod) => pod.longRunning)
    .flatMap((pod) =>
      pod.spec.containers.flatMap((c) => {
        const problems: string[] = [];
        if (!c.ports?.length) {
          if (!c.readinessProbe?.exec?.command.length) problems.push('serves no port and runs no readiness command');
          if (c.readinessProbe?.httpGet || c.livenessProbe?.httpGet) problems.push('probes a port it does not declare');
          return problems.map((p) => `${where(pod, c)}: ${p}`);
        }
        const declared = (port: string | number | undefined) =>
          (c.ports ?? []).some((p) => p.name === port || p.containerPort === port);
        for (const [probe, path] of [
          ['livenessProbe', '/healthz'],
          ['readinessProbe', '/readyz'],
        ] as const) {
          const get = c[probe]?.httpGet;
          if (get?.path !== path) problems.push(`${probe} is not GET ${path}`);
          else if (!declared(get.port))
            problems.push(`${probe} port ${String(get.port)} is not a port of the container`);
        }
        return problems.map((p) => `${where(pod, c)}: ${p}`);
      }),
    );
}

/**
 * Whether an environment variable is a secret setting of a service (declared `secret`, as
 * docs/configuration.md marks them; per-chain ones for any chain id). Their `_FILE` forms name a path.
 */
function isSecretSetting(name: string): boolean {
  const specs = [GATEWAY_SETTINGS, SIGNER_SETTINGS, INDEXER_SETTINGS, LEDGER_SETTINGS, chainSettings(0)] as Record<
    string,
    Setting<unknown>
  >[];
  const secret = specs.flatMap((spec) =>
    Object.values(spec)
      .filter((s) => s.secret)
      .map((s) => s.env),
  );
  return secret.includes(name) || secret.includes(name.replace(/_\d+$/, '_0'));
}
/** Values that look like a secret whatever their name: a 32-byte hex key, a URL with credentials, a PEM key. */
const SECRET_VALUE = [
  /\b(0x)?[0-9a-fA-F]{64}\b/,
  /[a-z][a-z0-9+.-]*:\/\/[^/\s"'@]*:[^/\s"'@]+@/i,
  /-----BEGIN [A-Z ]*PRIVATE KEY-----/,
];

/**
 * No secret reaches a rendered object as a value: the chart creates no Secret, no container's
 * environment sets a secret setting literally, and no literal value or ConfigMap entry looks like
 * a key or a password.
 */
export function checkNoSecretValues(objects: K8sObject[]): string[] {
  const problems = objects
    .filter((o) => o.kind === 'Secret')
    .map((o) => `Secret ${o.metadata.name}: rendered by the chart`);
  for (const pod of podsOf(objects))
    for (const c of containersOf(pod))
      for (const e of c.env ?? []) {
        if (e.value === undefined) continue;
        if (isSecretSetting(e.name)) problems.push(`${where(pod, c)}: ${e.name} set as a literal value`);
        else if (SECRET_VALUE.some((re) => re.test(e.value!)))
          problems.push(`${where(pod, c)}: ${e.name} has a value that looks like a secret`);
      }
  for (const o of objects.filter((x) => x.kind === 'ConfigMap'))
    for (const [key, value] of Object.entries(o.data ?? {}))
      if (SECRET_VALUE.some((re) => re.test(value)))
        problems.push(`ConfigMap ${o.metadata.name}: ${key} holds what looks like a secret`);
  return problems;
}

/** The user information of a URL (`user:password@` or `user@` after `://`, before the first `/`), if any. */
const URL_USER_INFO = /^[^/]*\/\/[^/]*@/;

/**
 * Every container that reaches Redis connects as its own user: REDIS_URL (and REDIS_RECORDS_URL,
 * where set) a value without a user or password in it, REDIS_USERNAME set, and the password from
 * a mounted file (REDIS_PASSWORD_FILE).
 */
export function checkRedisCredentials(objects: K8sObject[]): string[] {
  const problems: string[] = [];
  for (const pod of podsOf(objects))
    for (const c of containersOf(pod)) {
      const env = new Map((c.env ?? []).map((e) => [e.name, e]));
      if (!env.get('REDIS_URL')) continue;
      for (const name of ['REDIS_URL', 'REDIS_RECORDS_URL']) {
        const url = env.get(name);
        if (
          url &&
          (url.value === undefined || URL_USER_INFO.test(url.value) || /[?&]sentinelPassword=/i.test(url.value))
        )
          problems.push(`${where(pod, c)}: ${name} carries a user or password (or is no plain value)`);
      }
      if (!env.get('REDIS_USERNAME')?.value) problems.push(`${where(pod, c)}: no REDIS_USERNAME`);
      if (!env.get('REDIS_PASSWORD_FILE')?.value) problems.push(`${where(pod, c)}: no REDIS_PASSWORD_FILE`);
    }
  return problems;
}

/** A NetworkPolicy peer, as the chart renders them. */
export interface NetworkPolicyPeer {
  podSelector?: LabelSelector;
  namespaceSelector?: LabelSelector;
  ipBlock?: { cidr: string; except?: string[] };
}

interface LabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: unknown[];
}

export interface NetworkPolicyRule {
  from?: NetworkPolicyPeer[];
  ports?: { port?: string | number; protocol?: string }[];
}

/**
 * What the values admit (values.yaml's networkPolicy): Prometheus's peers and the probes' ranges
 * to every operator port, and to the gateway's public port its peers, or every source.
 */
export interface NetworkAdmission {
  prometheus: NetworkPolicyPeer[];
  probes: NetworkPolicyPeer[];
  public: NetworkPolicyPeer[] | 'anywhere';
}

/** Whether a pod selector selects these labels, as Kubernetes reads it: an empty one selects every pod. */
function selects(selector: LabelSelector | undefined, labels: Record<string, string>): boolean {
  if (selector?.matchExpressions?.length) throw new Error('a policy selects its pods by matchExpressions');
  return Object.entries(selector?.matchLabels ?? {}).every(([k, v]) => labels[k] === v);
}

/** The peers that reach each port: 'anywhere' for a rule without peers. */
function admittedByPort(rules: NetworkPolicyRule[], at: string, problems: string[]) {
  const byPort = new Map<string, NetworkPolicyPeer[] | 'anywhere'>();
  for (const rule of rules) {
    if (!rule.ports?.length) {
      problems.push(`${at}: a rule without ports admits its peers to every port`);
      continue;
    }
    for (const { port } of rule.ports) {
      const before = byPort.get(String(port)) ?? [];
      byPort.set(String(port), !rule.from?.length || before === 'anywhere' ? 'anywhere' : [...before, ...rule.from]);
    }
  }
  return byPort;
}

/** A set of peers in one canonical order, to compare two of them. */
const peerSet = (peers: NetworkPolicyPeer[] | 'anywhere') =>
  peers === 'anywhere' ? peers : JSON.stringify(peers.map(canonical).sort());

/**
 * Each part's pods are selected by exactly one NetworkPolicy, which restricts ingress and admits
 * to each of the part's ports only what must reach it: the gateway's public port (`http`) what
 * the values admit; every operator port (the gateway's `ops`; the signer's `http`, the indexers'
 * and the ledgers' `metrics`, which serve /metrics) Prometheus and the probes' ranges, and nothing
 * else but the gateway's pods to the signer; the settlement and the risk command's pod nothing.
 */
export function checkNetworkPolicies(objects: K8sObject[], admit: NetworkAdmission): string[] {
  const policies = objects.filter((o) => o.kind === 'NetworkPolicy');
  const pods = podsOf(objects);
  const gateway = pods.find((p) => p.labels['app.kubernetes.io/component'] === 'gateway');
  if (!gateway) return ['no gateway Deployment rendered'];
  const gatewayPeer = { podSelector: { matchLabels: (gateway.owner.spec!.selector as LabelSelector).matchLabels } };
  const operators = [...admit.prometheus, ...admit.probes];
  const operatorPort = (port: string): [string, NetworkPolicyPeer[]][] => (operators.length ? [[port, operators]] : []);
  const problems: string[] = [];
  for (const pod of pods) {
    const component = pod.labels['app.kubernetes.io/component'] ?? pod.owner.metadata.name;
    const selecting = policies.filter((p) => selects(p.spec?.podSelector as LabelSelector, pod.labels));
    if (selecting.length !== 1) {
      problems.push(`${component}: selected by ${selecting.length} NetworkPolicies, expected 1`);
      continue;
    }
    const policy = selecting[0]!;
    const at = `NetworkPolicy ${policy.metadata.name}`;
    const spec = policy.spec as { policyTypes?: string[]; ingress?: NetworkPolicyRule[] };
    if (!spec.policyTypes?.includes('Ingress')) problems.push(`${at}: does not restrict ingress`);
    const expected = new Map<string, NetworkPolicyPeer[] | 'anywhere'>(
      component === 'gateway'
        ? [['http', admit.public], ...operatorPort('ops')]
        : component === 'signer'
          ? [['http', [gatewayPeer, ...operators]]]
          : /^(indexer|ledger)-\d+$/.test(component)
            ? operatorPort('metrics')
            : [],
    );
    const admitted = admittedByPort(spec.ingress ?? [], at, problems);
    for (const port of new Set([...expected.keys(), ...admitted.keys()])) {
      const [want, got] = [expected.get(port) ?? [], admitted.get(port) ?? []];
      if (peerSet(want) !== peerSet(got))
        problems.push(
          `${at}: port ${port} admits ${got === 'anywhere' ? 'every source' : JSON.stringify(got)}, expected ${
            want === 'anywhere' ? 'every source' : JSON.stringify(want)
          }`,
        );
    }
  }
  return problems;
}

/** JSON with every object's keys sorted: helm writes keys in alphabetical order, alerts.yml in its own. */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_k, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v as Json).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : v,
  );
}

/**
 * The PrometheusRule carries the groups of deploy/prometheus/alerts.yml, unchanged (`alerts` is
 * that file, parsed). `expected`: whether the value set turns the rule on.
 */
export function checkAlertRules(objects: K8sObject[], alerts: { groups: unknown[] }, expected: boolean): string[] {
  const rules = objects.filter((o) => o.kind === 'PrometheusRule');
  if (!expected) return rules.length ? ['a PrometheusRule rendered although monitoring.prometheusRule is off'] : [];
  if (rules.length !== 1) return [`${rules.length} PrometheusRules rendered, expected 1`];
  const groups = (rules[0]!.spec as { groups?: unknown }).groups;
  return canonical(groups) === canonical(alerts.groups)
    ? []
    : [`PrometheusRule ${rules[0]!.metadata.name}: its groups differ from deploy/prometheus/alerts.yml`];
}

/** Images are pinned: a tag that is not `latest`, or a digest. */
export function checkImages(objects: K8sObject[]): string[] {
  return podsOf(objects).flatMap((pod) =>
    containersOf(pod)
      .filter((c) => !c.image || !/(@sha256:[0-9a-f]{64}|:[\w][\w.-]*)$/.test(c.image) || /:latest$/.test(c.image))
      .map((c) => `${where(pod, c)}: image ${c.image ?? '(none)'} is not pinned`),
  );
}
