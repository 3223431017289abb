/**
 * The environment the Helm chart gives each process, loaded as the process loads it, so that a
 * misnamed setting or file fails here and not in a cluster: its secrets as mounted files, the Redis
 * user of its role and that user's password, the records' server (redis.recordsUrl) and the
 * sentinels' own password; Redis URLs carrying credentials are refused. The rendering is
 * support/helm-render.ts, shared with the chart's other tests.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  chainsSetting,
  DURABLE_WRITE_SETTINGS,
  loadConfig,
  redisConnectionUrls,
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
import { podsOf, type K8sObject } from '../support/chart-policies';
import { COMPONENTS, named, refusal, render, rendered } from '../support/helm-render';

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

describe('the Helm chart: secrets and Redis', () => {
  it("behavior: secrets come from the named Secrets as files (the _FILE settings), the Redis user's password too", () => {
    const objects = rendered('production-sentinel-values.yaml');
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
    const objects = rendered('production-sentinel-values.yaml');
    for (const pod of podsOf(objects)) {
      const names = pod.spec.containers[0]!.env!.map((e) => e.name);
      expect([pod.labels['app.kubernetes.io/component'], names]).toEqual([
        pod.labels['app.kubernetes.io/component'],
        expect.arrayContaining(['REDIS_SENTINEL_PASSWORD_FILE']),
      ]);
    }
    for (const pod of podsOf(rendered('minimal-values.yaml')))
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
      for (const pod of podsOf(rendered(set))) expect(envOf(pod).map((e) => e.name)).not.toContain('REDIS_RECORDS_URL');
    expect(
      podsOf(render('minimal-values.yaml', '--set', 'redis.recordsUrl=')).flatMap((pod) =>
        envOf(pod).map((e) => e.name),
      ),
    ).not.toContain('REDIS_RECORDS_URL');
    // Every other variable as without it: REDIS_DURABILITY and REDIS_DURABLE_REPLICAS (the records'
    // rule, which the processes apply to REDIS_RECORDS_URL) of the signer, the ledgers and the risk pod.
    const without = new Map(podsOf(rendered('production-sentinel-values.yaml')).map((pod) => [component(pod), pod]));
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
    const objects = rendered('production-sentinel-values.yaml');
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
});

describe('the rendered environment of each process', () => {
  it.each(['minimal-values.yaml', 'production-sentinel-values.yaml'])(
    'behavior: with %s, every variable is a setting of that process, and the whole loads as its configuration',
    (set) => {
      const objects = rendered(set);
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
