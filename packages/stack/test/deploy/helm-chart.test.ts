/**
 * The Helm chart (deploy/helm/pmm-quote-service), what its values render: `helm lint` and `helm
 * template` of its value sets (ci/*.yaml: minimal, production on Sentinel, every option on), every
 * rendered object validated against the Kubernetes API schemas (kubernetes-models 5.1.0:
 * Kubernetes 1.34; the Prometheus Operator's kinds by monitoring-crds.ts), and the parts each value
 * renders or refuses. The chart's other concerns have their own files: its policies
 * (helm-chart-policies.test.ts), the environment each process gets (helm-chart-environment.test.ts)
 * and the risk command's pod (helm-chart-risk-pod.test.ts); the rendering they share is
 * support/helm-render.ts.
 */
import { spawnSync } from 'node:child_process';
import { lstatSync, readFileSync, readlinkSync } from 'node:fs';
import path from 'node:path';
import { parse as parseYaml } from 'yaml';
import { checkNetworkPolicies, podsOf, type K8sObject } from '../support/chart-policies';
import {
  ALERTS_FILE,
  CHART,
  ROOT,
  VALUE_SETS,
  admissionOf,
  byKind,
  named,
  refusal,
  render,
  rendered,
  runHelm,
} from '../support/helm-render';
import { checkMonitoringCrd } from '../support/monitoring-crds';

/** Kubernetes API objects through kubernetes-models' validators (support/validate-k8s.mjs). */
function validateObjects(objects: K8sObject[]): { kind: string; name: string; error: string | null }[] {
  const r = spawnSync(process.execPath, [path.join(__dirname, '..', 'support', 'validate-k8s.mjs')], {
    input: JSON.stringify(objects),
    encoding: 'utf8',
  });
  if (r.status !== 0) throw new Error(`validate-k8s.mjs failed: ${r.stderr}`);
  return JSON.parse(r.stdout) as { kind: string; name: string; error: string | null }[];
}

const isCrd = (o: K8sObject) => o.apiVersion.startsWith('monitoring.coreos.com/');

describe('the Helm chart', () => {
  it('behavior: three value sets at least: minimal, production on Sentinel, every option on', () => {
    expect(VALUE_SETS).toEqual(
      expect.arrayContaining(['minimal-values.yaml', 'production-sentinel-values.yaml', 'every-option-values.yaml']),
    );
  });

  it.each(VALUE_SETS)('behavior: helm lint passes with %s', (set) => {
    const r = runHelm(['lint', CHART, '--strict', '-f', path.join(CHART, 'ci', set)]);
    expect(`${r.stdout}${r.stderr}`).toContain('0 chart(s) failed');
    expect(r.status).toBe(0);
  });

  it.each(VALUE_SETS)('behavior: every object rendered from %s is valid against the Kubernetes 1.34 API', (set) => {
    const objects = rendered(set);
    const invalid = validateObjects(objects.filter((o) => !isCrd(o))).filter((r) => r.error !== null);
    expect(invalid).toEqual([]);
    expect(objects.filter(isCrd).flatMap(checkMonitoringCrd)).toEqual([]);
  });

  it('behavior: the validator refuses an object that breaks its schema', () => {
    const deployment = named(rendered('minimal-values.yaml'), 'Deployment', '-gateway')!;
    const broken = { ...deployment, spec: { ...deployment.spec, replicas: 'two' } };
    expect(validateObjects([broken])[0]!.error).toMatch(/replicas must be integer/);
  });

  it('behavior: every option on renders every part', () => {
    const objects = rendered('every-option-values.yaml');
    expect(byKind(objects, 'HorizontalPodAutoscaler')).toHaveLength(1);
    expect(byKind(objects, 'Ingress')).toHaveLength(1);
    expect(byKind(objects, 'ServiceMonitor')).toHaveLength(1);
    expect(byKind(objects, 'PrometheusRule')).toHaveLength(1);
    // The report goes to the claim the values name: the chart makes none.
    expect(byKind(objects, 'PersistentVolumeClaim')).toHaveLength(0);
    const cron = byKind(objects, 'CronJob')[0]!;
    const volumes = podsOf([cron])[0]!.spec.volumes as {
      name: string;
      persistentVolumeClaim?: { claimName: string };
    }[];
    expect(volumes.find((v) => v.name === 'reports')?.persistentVolumeClaim?.claimName).toBe('pmm-reports');
  });

  it('behavior: the gateway has its Service, its operator port on another, a PDB and spread; the Ingress reaches only the public port', () => {
    const objects = rendered('production-sentinel-values.yaml');
    const gatewayService = named(objects, 'Service', '-gateway')!;
    const opsService = named(objects, 'Service', '-gateway-ops')!;
    expect((gatewayService.spec as { ports: { port: number }[] }).ports.map((p) => p.port)).toEqual([8080]);
    expect((opsService.spec as { ports: { targetPort: string }[] }).ports.map((p) => p.targetPort)).toEqual(['ops']);
    const ingress = byKind(objects, 'Ingress')[0]!;
    const backends = JSON.stringify(ingress.spec);
    expect(backends).toContain(`"name":"${gatewayService.metadata.name}"`);
    expect(backends).not.toContain(opsService.metadata.name);
    expect(backends).not.toMatch(/9080|"ops"/);
    expect(named(objects, 'PodDisruptionBudget', '-gateway')).toBeDefined();
    const gateway = podsOf([named(objects, 'Deployment', '-gateway')!])[0]!;
    expect(gateway.spec.topologySpreadConstraints).toEqual([
      expect.objectContaining({ topologyKey: 'kubernetes.io/hostname', maxSkew: 1 }),
    ]);
    // Probes on the operator port: the public port answers /healthz but not /readyz.
    expect(gateway.spec.containers[0]!.readinessProbe?.httpGet).toEqual({ path: '/readyz', port: 'ops' });
    expect(gateway.spec.containers[0]!.ports).toContainEqual({ name: 'ops', containerPort: 9080 });
  });

  it('behavior: the signer runs two replicas or more, with a Service and a PDB; the chart refuses one', () => {
    const objects = rendered('minimal-values.yaml');
    expect((named(objects, 'Deployment', '-signer')!.spec as { replicas: number }).replicas).toBeGreaterThanOrEqual(2);
    expect(named(objects, 'Service', '-signer')).toBeDefined();
    expect(named(objects, 'PodDisruptionBudget', '-signer')).toBeDefined();
    expect(refusal('--set', 'signer.replicas=1')).toMatch(/signer.replicas must be at least 2/);
  });

  it('behavior: one indexer Deployment per chain of the values, with its replicas; a chain not in `chains` is refused', () => {
    const objects = rendered('production-sentinel-values.yaml');
    const indexers = byKind(objects, 'Deployment').filter((d) => /-indexer-\d+$/.test(d.metadata.name));
    expect(
      Object.fromEntries(
        indexers.map((d) => [d.metadata.name.replace(/.*-indexer-/, ''), (d.spec as { replicas: number }).replicas]),
      ),
    ).toEqual({
      '56': 2,
      '4663': 3,
      '8453': 2,
    });
    const env = podsOf(indexers.filter((d) => d.metadata.name.endsWith('-8453'))).flatMap(
      (p) => p.spec.containers[0]!.env!,
    );
    expect(env).toContainEqual({ name: 'CHAIN_ID', value: '8453' });
    expect(env).toContainEqual({ name: 'MAX_HEAD_LAG_MS', value: '6000' });
    expect(refusal('--set', 'indexers.56.existingSecret=x')).toMatch(/chain 56 is not in chains/);
  });

  it('behavior: one ledger per chain of `indexers`: one replica replaced by Recreate (one writer), its own Redis user, the durability rule, probed and scraped on 8095; its settings from ledger.env under ledger.chains.<id>.env', () => {
    const objects = rendered('every-option-values.yaml');
    const ledgers = byKind(objects, 'Deployment').filter((d) => /-ledger-\d+$/.test(d.metadata.name));
    expect(ledgers.map((d) => d.metadata.name.replace(/.*-ledger-/, '')).sort()).toEqual(['56', '8453']);
    for (const d of ledgers) {
      const spec = d.spec as { replicas: number; strategy: { type: string } };
      expect([d.metadata.name, spec.replicas, spec.strategy.type]).toEqual([d.metadata.name, 1, 'Recreate']);
    }
    const [pod] = podsOf(ledgers.filter((d) => d.metadata.name.endsWith('-8453')));
    const container = pod!.spec.containers[0]!;
    expect((container as { command?: string[] }).command).toEqual(['node', 'services/indexer/dist/ledger-main.js']);
    expect(container.ports).toEqual([{ name: 'metrics', containerPort: 8095 }]);
    expect(container.readinessProbe?.httpGet).toEqual({ path: '/readyz', port: 'metrics' });
    const env = container.env!;
    expect(env).toContainEqual({ name: 'CHAIN_ID', value: '8453' });
    expect(env).toContainEqual({ name: 'REDIS_USERNAME', value: 'ledger-8453' });
    // A limit's trip is a halt, written under the signer's durability rule.
    expect(env).toContainEqual({ name: 'REDIS_DURABILITY', value: 'replica' });
    expect(env).toContainEqual({ name: 'REDIS_DURABLE_REPLICAS', value: '1' });
    // ledger.env for every chain, the chain's own over it.
    expect(env).toContainEqual({ name: 'LEDGER_TRACER', value: 'callTracer' });
    expect(env).toContainEqual({ name: 'LEDGER_RETRY_MS', value: '2000' });
    expect(env).toContainEqual({ name: 'MAX_HEAD_LAG_MS', value: '6000' });
    const other = podsOf(ledgers.filter((d) => d.metadata.name.endsWith('-56')))[0]!.spec.containers[0]!;
    expect(other.env).toContainEqual({ name: 'LEDGER_TRACER', value: 'parity' });
    expect(other.env!.map((e) => e.name)).not.toContain('MAX_HEAD_LAG_MS');
    // Per chain resources over ledger.resources; no Secret of its own: only its Redis password.
    expect(container.resources).toEqual({
      requests: { cpu: '200m', memory: '256Mi' },
      limits: { cpu: '2', memory: '1Gi' },
    });
    expect(other.resources).toEqual({
      requests: { cpu: '50m', memory: '128Mi' },
      limits: { cpu: '1', memory: '512Mi' },
    });
    expect(pod!.spec.nodeSelector).toEqual({ 'node-pool': 'indexers' });
    const volumes = pod!.spec.volumes as { name: string; secret?: { secretName: string } }[];
    expect(volumes.filter((v) => v.secret).map((v) => v.name)).toEqual(['redis']);
    // A headless Service for the scrape, on the port's name the ServiceMonitor scrapes.
    const service = named(objects, 'Service', '-ledger-8453')!;
    expect(service.metadata.labels?.['pmm.metrics/scrape']).toBe('true');
    expect((service.spec as { clusterIP: string }).clusterIP).toBe('None');
  });

  it('behavior: ledger.enabled false renders no ledger; a chain of ledger.chains without an indexer, or a replicas value, is refused', () => {
    const off = render('production-sentinel-values.yaml', '--set', 'ledger.enabled=false');
    expect(off.filter((o) => /-ledger-/.test(o.metadata.name))).toEqual([]);
    expect(checkNetworkPolicies(off, admissionOf('production-sentinel-values.yaml'))).toEqual([]);
    expect(refusal('--set-string', 'ledger.chains.56.env.LEDGER_TRACER=parity')).toMatch(
      /ledger.chains.56: chain 56 has no indexer/,
    );
    expect(refusal('--set', 'ledger.replicas=2')).toMatch(/additional properties 'replicas' not allowed/);
    expect(refusal('--set', 'ledger.chains.8453.replicas=2')).toMatch(/additional properties 'replicas' not allowed/);
  });

  it('behavior: the chains file is a ConfigMap, the same map as the values', () => {
    const objects = rendered('minimal-values.yaml');
    const values = parseYaml(readFileSync(path.join(CHART, 'ci', 'minimal-values.yaml'), 'utf8')) as {
      chains: unknown;
    };
    const configMap = named(objects, 'ConfigMap', '-chains')!;
    expect(JSON.parse(configMap.data!['chains.json']!)).toEqual({ chains: values.chains });
  });

  it('behavior: the settlement runs on the first of the month with the operator image, as the operator user', () => {
    const objects = rendered('production-sentinel-values.yaml');
    const cron = byKind(objects, 'CronJob')[0]!;
    expect((cron.spec as { schedule: string }).schedule).toMatch(/^\S+ \S+ 1 \* \*$/);
    const pod = podsOf([cron])[0]!;
    expect(pod.spec.containers[0]!.image).toMatch(/pmm-operator@sha256:/);
    expect(pod.spec.containers[0]!.env).toContainEqual({ name: 'REDIS_USERNAME', value: 'operator' });
    expect(pod.spec.containers[0]!.env).toContainEqual({
      name: 'REDIS_PASSWORD_FILE',
      value: '/run/secrets/redis/password',
    });
    expect(pod.spec.volumes).toContainEqual(
      expect.objectContaining({
        secret: expect.objectContaining({
          items: [
            { key: 'operator-password', path: 'password' },
            { key: 'sentinel-password', path: 'sentinel-password' },
          ],
        }),
      }),
    );
    expect(byKind(objects, 'PersistentVolumeClaim')).toHaveLength(1);
  });

  it('behavior: the grace period covers the pre-stop pause and the drain; the chart refuses a shorter one', () => {
    for (const objects of VALUE_SETS.map(rendered))
      for (const pod of podsOf(objects).filter((p) => p.longRunning)) {
        const pause = (pod.spec.containers[0] as { lifecycle?: { preStop?: { sleep?: { seconds: number } } } })
          .lifecycle?.preStop?.sleep?.seconds;
        expect(pause).toBeGreaterThan(0);
        expect(pod.spec.terminationGracePeriodSeconds).toBeGreaterThanOrEqual(pause! + 15);
      }
    expect(refusal('--set', 'shutdown.terminationGracePeriodSeconds=12')).toMatch(/at least preStopSeconds \+ 15/);
  });

  it('behavior: monitoring: a ServiceMonitor of every part, the dashboard ConfigMap for the sidecar', () => {
    const objects = rendered('production-sentinel-values.yaml');
    const monitor = byKind(objects, 'ServiceMonitor')[0]!;
    const selector = (monitor.spec as { selector: { matchLabels: Record<string, string> } }).selector.matchLabels;
    const scraped = byKind(objects, 'Service').filter((s) =>
      Object.entries(selector).every(([k, v]) => s.metadata.labels?.[k] === v),
    );
    expect(scraped.map((s) => s.metadata.name.replace(/^pmm-pmm-quote-service-/, '')).sort()).toEqual([
      'gateway-ops',
      'indexer-4663',
      'indexer-56',
      'indexer-8453',
      'ledger-4663',
      'ledger-56',
      'ledger-8453',
      'signer',
    ]);
    // The endpoint that scrapes the indexers' and the ledgers' port, by its name.
    const endpoints = (monitor.spec as { endpoints: { port: string; path: string }[] }).endpoints;
    expect(endpoints).toContainEqual(expect.objectContaining({ port: 'metrics', path: '/metrics' }));
    for (const ledger of scraped.filter((s) => /-ledger-\d+$/.test(s.metadata.name)))
      expect((ledger.spec as { ports: { name: string; port: number }[] }).ports).toEqual([
        expect.objectContaining({ name: 'metrics', port: 8095 }),
      ]);
    const dashboard = named(objects, 'ConfigMap', '-dashboard')!;
    expect(dashboard.metadata.labels?.grafana_dashboard).toBe('1');
    expect(dashboard.data!['pmm-quote-service.json']).toBe(
      readFileSync(path.join(ROOT, 'deploy', 'grafana', 'dashboards', 'pmm-quote-service.json'), 'utf8'),
    );
  });

  it('error: a misspelt or unknown value is refused (values.schema.json), not ignored', () => {
    expect(refusal('--set', 'gateway.replica=3')).toMatch(/additional properties 'replica' not allowed/);
    expect(refusal('--set', 'redis.durability=sometimes')).toMatch(/durability/);
  });

  it('behavior: the rules and the dashboard have one source: the chart links to deploy/', () => {
    expect(lstatSync(path.join(CHART, 'files', 'alerts.yml')).isSymbolicLink()).toBe(true);
    expect(path.resolve(CHART, 'files', readlinkSync(path.join(CHART, 'files', 'alerts.yml')))).toBe(ALERTS_FILE);
    expect(lstatSync(path.join(CHART, 'files', 'pmm-quote-service.json')).isSymbolicLink()).toBe(true);
  });
});
