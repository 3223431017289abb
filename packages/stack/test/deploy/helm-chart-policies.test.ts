/**
 * The Helm chart's policies (support/chart-policies.ts): every value set's rendering keeps them
 * (limits, hardening, probes, no secret in a value, Redis credentials, one NetworkPolicy per part
 * admitting what the values say, the alert rules of deploy/, pinned images), the values that would
 * break a NetworkPolicy are refused, and each policy is shown to fail on a rendering that breaks
 * it. The rendering is support/helm-render.ts, shared with the chart's other tests.
 */
import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import {
  checkAlertRules,
  checkHardening,
  checkImages,
  checkNoSecretValues,
  checkProbes,
  checkRedisCredentials,
  checkResources,
  checkNetworkPolicies,
  podsOf,
  type K8sObject,
  type NetworkAdmission,
  type NetworkPolicyRule,
} from '../support/chart-policies';
import {
  ALERTS_FILE,
  COMPONENTS,
  VALUE_SETS,
  admissionOf,
  byKind,
  named,
  refusal,
  render,
  rendered,
  valueSet,
} from '../support/helm-render';

const alerts = parseYaml(readFileSync(ALERTS_FILE, 'utf8')) as { groups: unknown[] };
const rulesOn = (set: string) => valueSet(set).monitoring?.prometheusRule?.enabled === true;

/** Every policy at once: what a good value set must pass. */
function policyViolations(objects: K8sObject[], rulesOn: boolean, admission: NetworkAdmission): string[] {
  return [
    ...checkResources(objects),
    ...checkHardening(objects),
    ...checkProbes(objects),
    ...checkNoSecretValues(objects),
    ...checkRedisCredentials(objects),
    ...checkNetworkPolicies(objects, admission),
    ...checkAlertRules(objects, alerts, rulesOn),
    ...checkImages(objects),
  ];
}

describe('the Helm chart keeps its policies', () => {
  it.each(VALUE_SETS)('behavior: the rendering of %s keeps every policy', (set) => {
    expect(policyViolations(rendered(set), rulesOn(set), admissionOf(set))).toEqual([]);
  });

  it('behavior: one NetworkPolicy per part: the public port from the Ingress controller, each operator port from Prometheus only, the signer from the gateway, the settlement and the risk pod from nothing', () => {
    const objects = rendered('production-sentinel-values.yaml');
    const policies = byKind(objects, 'NetworkPolicy');
    expect(policies.map((p) => p.metadata.name.replace(/^pmm-pmm-quote-service-/, '')).sort()).toEqual(COMPONENTS);
    const prometheus = {
      namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } },
      podSelector: { matchLabels: { 'app.kubernetes.io/name': 'prometheus' } },
    };
    const ingressNginx = {
      namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'ingress-nginx' } },
      podSelector: { matchLabels: { 'app.kubernetes.io/name': 'ingress-nginx' } },
    };
    const on = (port: string) => [{ port, protocol: 'TCP' }];
    const ingressOf = (suffix: string) => named(objects, 'NetworkPolicy', suffix)!.spec!.ingress;
    expect(ingressOf('-gateway')).toEqual([
      { from: [ingressNginx], ports: on('http') },
      { from: [prometheus], ports: on('ops') },
    ]);
    const gatewayPods = {
      podSelector: {
        matchLabels: {
          'app.kubernetes.io/name': 'pmm-quote-service',
          'app.kubernetes.io/instance': 'pmm',
          'app.kubernetes.io/component': 'gateway',
        },
      },
    };
    expect(ingressOf('-signer')).toEqual([
      { from: [gatewayPods], ports: on('http') },
      { from: [prometheus], ports: on('http') },
    ]);
    expect(ingressOf('-indexer-8453')).toEqual([{ from: [prometheus], ports: on('metrics') }]);
    // The ledger: its metrics port (/metrics and the probes) from Prometheus only; the risk pod serves nothing.
    expect(ingressOf('-ledger-8453')).toEqual([{ from: [prometheus], ports: on('metrics') }]);
    expect(ingressOf('-settlement')).toEqual([]);
    expect(ingressOf('-risk')).toEqual([]);
    for (const policy of policies) expect(policy.spec!.policyTypes).toEqual(['Ingress']);
  });

  it('behavior: the public port admits what networkPolicy.public says; probesFrom reaches the operator ports; off renders none', () => {
    const anywhere = render(
      'minimal-values.yaml',
      '--set',
      'networkPolicy.public.ingressController=null',
      '--set',
      'networkPolicy.public.fromAnywhere=true',
    );
    expect(named(anywhere, 'NetworkPolicy', '-gateway')!.spec!.ingress).toEqual([
      { ports: [{ port: 'http', protocol: 'TCP' }] },
    ]);
    expect(checkNetworkPolicies(anywhere, { prometheus: [], probes: [], public: 'anywhere' })).toEqual([]);
    const balancer = { ipBlock: { cidr: '10.20.0.0/24' } };
    const ranges = render(
      'minimal-values.yaml',
      '--set',
      'networkPolicy.public.ingressController=null',
      '--set',
      'networkPolicy.public.from[0].ipBlock.cidr=10.20.0.0/24',
      '--set',
      'networkPolicy.probesFrom[0].ipBlock.cidr=10.20.0.0/24',
    );
    expect(checkNetworkPolicies(ranges, { prometheus: [], probes: [balancer], public: [balancer] })).toEqual([]);
    for (const part of ['-indexer-8453', '-ledger-8453'])
      expect(named(ranges, 'NetworkPolicy', part)!.spec!.ingress).toEqual([
        { from: [balancer], ports: [{ port: 'metrics', protocol: 'TCP' }] },
      ]);
    expect(byKind(render('minimal-values.yaml', '--set', 'networkPolicy.enabled=false'), 'NetworkPolicy')).toEqual([]);
  });

  it('error: the chart refuses policies that would admit everyone or no one by mistake', () => {
    expect(refusal('--set', 'networkPolicy.public.ingressController=null')).toMatch(
      /networkPolicy.public: name who reaches the gateway's public port/,
    );
    expect(refusal('--set', 'networkPolicy.public.fromAnywhere=true')).toMatch(
      /fromAnywhere admits every source: leave ingressController and from empty/,
    );
    expect(refusal('--set', 'networkPolicy.public.ingressController.podSelector=null')).toMatch(
      /networkPolicy.public.ingressController needs both namespaceSelector and podSelector/,
    );
    expect(refusal('--set', 'networkPolicy.prometheus.podSelector.matchLabels.app=prometheus')).toMatch(
      /networkPolicy.prometheus needs both namespaceSelector and podSelector/,
    );
    expect(refusal('--set', 'monitoring.serviceMonitor.enabled=true')).toMatch(
      /networkPolicy.prometheus is required with monitoring.serviceMonitor/,
    );
    expect(refusal('--set', 'networkPolicy.probesFrom[0].ipBlock.cidr=0.0.0.0/0')).toMatch(
      /0.0.0.0\/0 would admit everyone to the operator ports/,
    );
    // The signer's own list of scrapers gave way to networkPolicy.prometheus.
    expect(refusal('--set', 'signer.networkPolicy.metricsFrom[0].ipBlock.cidr=10.0.0.0/8')).toMatch(
      /additional properties 'networkPolicy' not allowed/,
    );
  });
});

describe('each policy fails on a rendering that breaks it', () => {
  it('error: a container without limits', () => {
    const objects = render('minimal-values.yaml', '--set', 'gateway.resources.limits=null');
    expect(checkResources(objects)).toEqual([
      expect.stringMatching(/gateway, container gateway: no cpu limits/),
      expect.stringMatching(/gateway, container gateway: no memory limits/),
    ]);
  });

  it('error: a container that runs as root', () => {
    const objects = render('minimal-values.yaml', '--set', 'podSecurityContext.runAsUser=0');
    expect(checkHardening(objects)).toContainEqual(expect.stringMatching(/container signer: runs as user 0/));
    const writable = render('minimal-values.yaml', '--set', 'containerSecurityContext.readOnlyRootFilesystem=false');
    expect(checkHardening(writable)).toContainEqual(expect.stringMatching(/root filesystem is writable/));
  });

  it('error: a secret in a value: a secret setting set literally, or a value shaped like a key', () => {
    const named_ = render('minimal-values.yaml', '--set-string', 'gateway.env.INTERNAL_TOKEN=not-a-file-but-the-token');
    expect(checkNoSecretValues(named_)).toEqual([expect.stringMatching(/INTERNAL_TOKEN set as a literal value/)]);
    const perChain = render(
      'minimal-values.yaml',
      '--set-string',
      'signer.env.SIGNER_KEYSTORE_PASSWORD_8453=hunter22hunter22',
    );
    expect(checkNoSecretValues(perChain)).toEqual([
      expect.stringMatching(/SIGNER_KEYSTORE_PASSWORD_8453 set as a literal/),
    ]);
    const key = `0x${'ab'.repeat(32)}`;
    const shaped = render('minimal-values.yaml', '--set-string', `indexers.8453.env.SOMETHING=${key}`);
    expect(checkNoSecretValues(shaped)).toEqual([
      expect.stringMatching(/SOMETHING has a value that looks like a secret/),
    ]);
    const url = render('minimal-values.yaml', '--set-string', 'chains.8453.rpcUrl=https://user:hunter22@node.example');
    expect(checkNoSecretValues(url)).toEqual([expect.stringMatching(/ConfigMap .*-chains: chains.json/)]);
  });

  it('error: a Redis URL with credentials, or a part without its Redis user or password file', () => {
    // redis.url with credentials the chart refuses (above); a part's `env` can still set REDIS_URL.
    for (const [setting, refusal] of [
      [
        'gateway.env.REDIS_URL=redis://gateway:pw@redis:6379',
        /gateway, container gateway: REDIS_URL carries a user or password/,
      ],
      ['indexers.8453.env.REDIS_URL=redis://gateway@redis:6379', /indexer-8453, .*REDIS_URL carries a user/],
      [
        'signer.env.REDIS_RECORDS_URL=redis://signer:pw@records:6379',
        /signer, container signer: REDIS_RECORDS_URL carries a user or password/,
      ],
    ] as const) {
      const withCredentials = render('minimal-values.yaml', '--set-string', setting);
      expect(checkRedisCredentials(withCredentials)).toEqual([expect.stringMatching(refusal)]);
    }
    const objects = structuredClone(rendered('minimal-values.yaml'));
    const signer = podsOf([named(objects, 'Deployment', '-signer')!])[0]!.spec.containers[0]!;
    signer.env = signer.env!.filter((e) => !['REDIS_USERNAME', 'REDIS_PASSWORD_FILE'].includes(e.name));
    expect(checkRedisCredentials(objects)).toEqual([
      expect.stringMatching(/signer: no REDIS_USERNAME/),
      expect.stringMatching(/signer: no REDIS_PASSWORD_FILE/),
    ]);
  });

  it('error: a part no NetworkPolicy selects or two select, a port open to more or less than the values admit', () => {
    const objects = rendered('production-sentinel-values.yaml');
    const admission = admissionOf('production-sentinel-values.yaml');
    const policy = (suffix: string) => named(objects, 'NetworkPolicy', suffix)!;
    // Without the gateway's policy (today's chart had only the signer's).
    expect(
      checkNetworkPolicies(
        objects.filter((o) => o !== policy('-gateway')),
        admission,
      ),
    ).toEqual(['gateway: selected by 0 NetworkPolicies, expected 1']);
    expect(checkNetworkPolicies([...objects, policy('-signer')], admission)).toEqual([
      'signer: selected by 2 NetworkPolicies, expected 1',
    ]);
    // Without a ledger's, or the risk pod's.
    expect(
      checkNetworkPolicies(
        objects.filter((o) => o !== policy('-ledger-56') && o !== policy('-risk')),
        admission,
      ),
    ).toEqual([
      'ledger-56: selected by 0 NetworkPolicies, expected 1',
      'risk: selected by 0 NetworkPolicies, expected 1',
    ]);
    // A policy of every pod of the namespace selects each part a second time.
    const everyPod = { ...policy('-settlement'), spec: { ...policy('-settlement').spec, podSelector: {} } };
    expect(checkNetworkPolicies([...objects, everyPod], admission)).toHaveLength(podsOf(objects).length);
    // An indexer's metrics port open to every pod of the monitoring namespace, not only Prometheus.
    const broken = structuredClone(objects);
    const indexerRules = named(broken, 'NetworkPolicy', '-indexer-56')!.spec!.ingress as NetworkPolicyRule[];
    indexerRules[0]!.from!.push({ namespaceSelector: admission.prometheus[0]!.namespaceSelector });
    // The gateway's operator port open to every source; the signer's rule of the gateway on every port.
    const gatewayRules = named(broken, 'NetworkPolicy', '-gateway')!.spec!.ingress as NetworkPolicyRule[];
    delete gatewayRules[1]!.from;
    delete (named(broken, 'NetworkPolicy', '-signer')!.spec!.ingress as NetworkPolicyRule[])[0]!.ports;
    // The settlement's policy restricting egress only: its pods take any ingress.
    named(broken, 'NetworkPolicy', '-settlement')!.spec!.policyTypes = ['Egress'];
    // A ledger's metrics port open to every source; the risk pod's policy admitting the gateway's pods.
    delete (named(broken, 'NetworkPolicy', '-ledger-8453')!.spec!.ingress as NetworkPolicyRule[])[0]!.from;
    const signerRule = (named(broken, 'NetworkPolicy', '-signer')!.spec!.ingress as NetworkPolicyRule[])[0]!;
    named(broken, 'NetworkPolicy', '-risk')!.spec!.ingress = [{ from: signerRule.from, ports: [{ port: 8080 }] }];
    expect(checkNetworkPolicies(broken, admission)).toEqual([
      expect.stringMatching(/-gateway: port ops admits every source, expected \[\{"namespaceSelector"/),
      expect.stringMatching(
        /-indexer-56: port metrics admits .*,\{"namespaceSelector":\{"matchLabels":\{[^}]*\}\}\}\], expected/,
      ),
      expect.stringMatching(/-ledger-8453: port metrics admits every source, expected \[\{"namespaceSelector"/),
      expect.stringMatching(/-risk: port 8080 admits \[\{"podSelector".*\], expected \[\]/),
      expect.stringMatching(/-signer: a rule without ports admits its peers to every port/),
      expect.stringMatching(/-signer: port http admits \[\{"namespaceSelector".*\], expected \[\{"podSelector"/),
      expect.stringMatching(/-settlement: does not restrict ingress/),
    ]);
    // The values admit a port the rendering closes: the public port from anywhere.
    expect(checkNetworkPolicies(objects, { ...admission, public: 'anywhere' })).toEqual([
      expect.stringMatching(/-gateway: port http admits .*ingress-nginx.*, expected every source/),
    ]);
  });

  it('error: rules that differ from alerts.yml', () => {
    // No value changes the rules (they are alerts.yml's): what breaks them is a change of the chart,
    // here made to its rendering: one expression altered.
    const objects = structuredClone(rendered('production-sentinel-values.yaml'));
    const rule = byKind(objects, 'PrometheusRule')[0]!;
    const groups = (rule.spec as { groups: { rules: { expr: string }[] }[] }).groups;
    groups[0]!.rules[0]!.expr += ' or vector(1)';
    expect(checkAlertRules(objects, alerts, true)).toEqual([
      expect.stringMatching(/differ from deploy\/prometheus\/alerts.yml/),
    ]);
    expect(
      checkAlertRules(
        objects.filter((o) => o !== rule),
        alerts,
        true,
      ),
    ).toEqual(['0 PrometheusRules rendered, expected 1']);
  });

  it('error: a probe off its path', () => {
    const objects = structuredClone(rendered('minimal-values.yaml'));
    const signer = podsOf([named(objects, 'Deployment', '-signer')!])[0]!;
    signer.spec.containers[0]!.readinessProbe!.httpGet!.path = '/healthz';
    expect(checkProbes(objects)).toEqual([expect.stringMatching(/signer: readinessProbe is not GET \/readyz/)]);
    // The risk pod serves nothing: without its readiness command it would be Ready with a wrong password.
    const risk = podsOf([named(objects, 'Deployment', '-risk')!])[0]!;
    delete risk.spec.containers[0]!.readinessProbe;
    expect(checkProbes(objects)).toContainEqual(
      expect.stringMatching(/-risk, container risk: serves no port and runs no readiness command/),
    );
  });

  it('error: an image on `latest`', () => {
    const objects = render('minimal-values.yaml', '--set', 'image.tag=latest');
    expect(checkImages(objects).length).toBeGreaterThan(0);
    expect(checkImages(objects).every((p) => /:latest is not pinned/.test(p))).toBe(true);
  });
});
