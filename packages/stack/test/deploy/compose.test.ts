/**
 * docker-compose.yml cannot be run on the CI machines (no Docker engine), so this pins what
 * can be checked without one: the file parses, every service command runs a file the build
 * produces, every environment variable it sets is one the target program reads, every port
 * it names is the one the program listens on, and the Dockerfile builds what it copies.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { KNOWN_CHAIN_IDS } from '@pmm/protocol';
import {
  DURABLE_WRITE_SETTINGS,
  REDIS_CONNECTION_SETTINGS,
  redisStackUsers,
  SERVICE_NODE_FLAGS,
  SHARED_SETTINGS,
} from '@pmm/core';
import { GATEWAY_SETTINGS } from '@pmm/gateway';
import { INDEXER_SETTINGS, LEDGER_SETTINGS } from '@pmm/indexer';
import { SIGNER_SETTINGS, chainSettings } from '@pmm/signer';
import { operatorLinks, operatorProgram } from '../support/operator-image';

const root = path.resolve(__dirname, '..', '..', '..', '..');
const compose = parse(readFileSync(path.join(root, 'docker-compose.yml'), 'utf8'), { merge: true }) as {
  services: Record<
    string,
    {
      command?: string[];
      entrypoint?: string[];
      environment?: Record<string, string>;
      ports?: string[];
      healthcheck?: { test?: string[]; disable?: boolean };
      depends_on?: Record<string, { condition: string }>;
      network_mode?: string;
      restart?: string;
      profiles?: string[];
      env_file?: string | string[];
      volumes?: string[];
      build?: string | { context: string; target?: string; args?: string[] };
      read_only?: boolean;
      cap_drop?: string[];
      security_opt?: string[];
      mem_limit?: string;
      pids_limit?: number;
      tmpfs?: string[];
      user?: string;
    }
  >;
  volumes?: Record<string, unknown>;
};

type Spec = Record<string, { env: string; secret?: boolean }>;
function envNames(...specs: Spec[]): Set<string> {
  const names = new Set(['CONFIG_FILE']);
  for (const spec of specs)
    for (const s of Object.values(spec)) {
      names.add(s.env);
      if (s.secret) names.add(`${s.env}_FILE`);
    }
  return names;
}

/** The env names the devnet CLI reads, from its source (it has no settings object). */
function devnetEnvNames(): Set<string> {
  const source = readFileSync(path.join(root, 'packages/devnet/src/cli.ts'), 'utf8');
  return new Set([...source.matchAll(/\b(DEVNET_[A-Z_]+)\b/g)].map((m) => m[1]!));
}

/** The env names the redis-acl step reads, from its source (it has no settings object). */
function aclFileEnvNames(): Set<string> {
  const source = readFileSync(path.join(root, 'packages/core/src/redis/redis-acl-file.ts'), 'utf8');
  return new Set([...source.matchAll(/process\.env\.([A-Z_]+)/g)].map((m) => m[1]!));
}

/** The key CLI's and the operator commands' settings: Redis (the shared ones) and, for settle, CHAINS. */
const toolSettings = {
  ...REDIS_CONNECTION_SETTINGS,
  redisKeyPrefix: SHARED_SETTINGS.redisKeyPrefix,
  secretsDir: SHARED_SETTINGS.secretsDir,
};

const programs: Record<string, Set<string>> = {
  'services/signer/dist/main.js': envNames(SIGNER_SETTINGS, ...KNOWN_CHAIN_IDS.map((id) => chainSettings(id) as Spec)),
  'services/gateway/dist/main.js': envNames(GATEWAY_SETTINGS),
  'services/indexer/dist/main.js': envNames(INDEXER_SETTINGS),
  'services/indexer/dist/ledger-main.js': envNames(LEDGER_SETTINGS),
  'packages/devnet/dist/cli.js': devnetEnvNames(),
  'packages/core/dist/redis/redis-acl-file.js': aclFileEnvNames(),
  'services/gateway/dist/cli/keys.js': envNames(toolSettings, DURABLE_WRITE_SETTINGS),
  // The operator image runs `node <command>.js` in its working folder: the command's entry point (support/operator-image.ts).
  'packages/operator/dist/settle/settle.js': envNames(toolSettings),
  'packages/operator/dist/risk/risk.js': envNames(toolSettings, DURABLE_WRITE_SETTINGS),
};

/** The program a service runs: its entry point's script, or its command's in the operator image's working folder. */
function programOf(svc: (typeof compose.services)[string]): string {
  const command = [...(svc.entrypoint ?? []), ...(svc.command ?? [])];
  if (command[0] !== 'node') return operatorProgram(command[0]!);
  // `node risk.js`: a script of the operator image's working folder.
  return command[1]!.includes('/') ? command[1]! : operatorProgram(command[1]!);
}

/** dist/x.js is built from src/x.ts. */
function sourceOf(distFile: string): string {
  return path.join(root, distFile.replace('/dist/', '/src/').replace(/\.js$/, '.ts'));
}

describe('docker-compose.yml', () => {
  const entries = Object.entries(compose.services);

  it('default: defines the two Redis servers, signer, gateway, one indexer and one ledger per chain and the devnet under a profile', () => {
    const names = entries.map(([name]) => name).sort();
    expect(names).toEqual(
      [
        'devnet',
        'gateway',
        'indexer-4663',
        'indexer-56',
        'indexer-8453',
        'ledger-4663',
        'ledger-56',
        'ledger-8453',
        'keys',
        'lb',
        'operator',
        'redis',
        'redis-acl',
        'redis-rebuildable',
        'risk',
        'signer',
      ].sort(),
    );
    expect(compose.services.devnet!.profiles).toEqual(['devnet']);
    // The key CLI and the operator commands run on demand (`docker compose run --rm keys ...`).
    expect(compose.services.keys!.profiles).toEqual(['tools']);
    expect(compose.services.operator!.profiles).toEqual(['tools']);
    expect(compose.services.risk!.profiles).toEqual(['tools']);
  });

  it.each(entries.filter(([name]) => !['redis', 'redis-rebuildable', 'lb'].includes(name)))(
    'behavior: %s runs a built entry point and sets only variables it reads',
    (_name, svc) => {
      const program = programOf(svc);
      expect(existsSync(sourceOf(program))).toBe(true);
      const known = programs[program];
      expect(known).toBeDefined();
      const unknown = Object.keys(svc.environment ?? {}).filter((name) => !known!.has(name));
      expect(unknown).toEqual([]);
    },
  );

  it('behavior: every indexer service names its own chain, and every chain has one', () => {
    const chains = entries
      .filter(([n]) => n.startsWith('indexer-'))
      .map(([n, s]) => [n.slice('indexer-'.length), s.environment?.CHAIN_ID]);
    for (const [fromName, fromEnv] of chains) expect(fromEnv).toBe(fromName);
    expect(chains.map(([id]) => Number(id)).sort()).toEqual([...KNOWN_CHAIN_IDS].sort());
  });

  it('behavior: health checks and published ports use the ports the services listen on', () => {
    for (const [, svc] of entries) {
      const env = svc.environment ?? {};
      const check = svc.healthcheck?.test?.join(' ') ?? '';
      const port = /127\.0\.0\.1:(\d+)\//.exec(check)?.[1];
      if (port) expect([env.PORT, env.OPS_PORT]).toContain(port);
    }
    const gateway = compose.services.gateway!;
    // No fixed host port (replicas scale): the operator port on loopback, at a port Docker picks.
    expect(gateway.ports).toEqual(['${GATEWAY_OPS_BIND:-127.0.0.1}::9080']);
    expect(gateway.environment?.PORT).toBe('8080');
    expect(gateway.environment?.OPS_PORT).toBe('9080');
    expect(compose.services.signer!.environment?.PORT).toBe(new URL(gateway.environment!.SIGNER_URL!).port);
  });

  it('behavior: the Dockerfile copies every workspace package manifest it installs', () => {
    const dockerfile = readFileSync(path.join(root, 'Dockerfile'), 'utf8');
    const workspaces = ['packages', 'services'].flatMap((group) =>
      readdirSync(path.join(root, group))
        .filter((dir) => existsSync(path.join(root, group, dir, 'package.json')))
        .map((dir) => `${group}/${dir}`),
    );
    expect(workspaces.length).toBeGreaterThanOrEqual(7);
    for (const dir of workspaces) expect(dockerfile).toContain(`COPY ${dir}/package.json ${dir}/`);
  });

  it("behavior: the operator image holds each command by its name in its working folder, a link to the command's entry point", () => {
    const links = operatorLinks();
    expect([...links.keys()].sort()).toEqual(['audit.js', 'fills.js', 'markouts.js', 'risk.js', 'settle.js']);
    for (const script of links.keys()) expect(existsSync(sourceOf(operatorProgram(script)))).toBe(true);
  });

  it('behavior: every secrets folder the devnet fills is made in its image, owned by its user', () => {
    // A named volume takes its first content and owner from the image's folder; a folder the image
    // lacks is made by Docker, owned by root, and the devnet (user node) cannot write its secrets.
    const dockerfile = readFileSync(path.join(root, 'Dockerfile'), 'utf8');
    const made = /RUN mkdir -p (\/devnet [^&]*)&&/.exec(dockerfile.replace(/\\\n/g, ' '))?.[1]?.split(/\s+/) ?? [];
    const filled = (compose.services.devnet!.volumes ?? [])
      .map((v) => v.split(':')[1]!)
      .filter((target) => target.startsWith('/devnet-secrets/'));
    expect(filled.length).toBeGreaterThanOrEqual(12);
    expect(filled.filter((target) => !made.includes(target))).toEqual([]);
  });

  it('behavior: the image runs the services with the V8 flags of SERVICE_NODE_FLAGS', () => {
    const dockerfile = readFileSync(path.join(root, 'Dockerfile'), 'utf8');
    expect(dockerfile).toContain(`NODE_OPTIONS=${SERVICE_NODE_FLAGS.join(' ')}`);
  });

  it('behavior: .env.example documents every variable the compose file substitutes', () => {
    const text = readFileSync(path.join(root, 'docker-compose.yml'), 'utf8');
    const substituted = new Set([...text.matchAll(/\$\{([A-Z0-9_]+)/g)].map((m) => m[1]!));
    const example = readFileSync(path.join(root, '.env.example'), 'utf8');
    const missing = [...substituted].filter((name) => !new RegExp(`^#?\\s*${name}=`, 'm').test(example));
    expect(missing).toEqual([]);
  });

  it('behavior: Redis keeps integrator data (AOF fsynced at each write, a named volume) and never evicts', () => {
    const redis = compose.services.redis!;
    const args = (redis.command ?? []).join(' ');
    expect(args).toContain('--appendonly yes');
    // The signer's REDIS_DURABILITY (auto: fsync for a single node) refuses anything else.
    expect(args).toContain('--appendfsync always');
    expect(args).toContain('--maxmemory-policy noeviction');
    expect(redis.volumes).toEqual(['redis-data:/data', 'redis-acl:/run/redis-acl:ro']);
    expect(Object.keys(compose.volumes ?? {})).toContain('redis-data');
  });

  it('behavior: two Redis roles: `redis` (the records, as before the split) is every REDIS_RECORDS_URL, `redis-rebuildable` (fsync once a second, its own volume, never evicts) every REDIS_URL; every Redis user waits for both', () => {
    const rebuildable = compose.services['redis-rebuildable']!;
    // The same server as the records' but for the fsync and the volume.
    const withoutFsync = (args: string[]) => args.join(' ').replace(/--appendfsync \S+/, '');
    expect(withoutFsync(rebuildable.command!)).toBe(withoutFsync(compose.services.redis!.command!));
    expect(rebuildable.command!.join(' ')).toContain('--appendfsync everysec');
    expect(rebuildable.volumes).toEqual(['redis-rebuildable-data:/data', 'redis-acl:/run/redis-acl:ro']);
    expect(Object.keys(compose.volumes ?? {})).toContain('redis-rebuildable-data');
    const { command: _records, volumes: _recordsVolumes, ...recordsRest } = compose.services.redis!;
    const { command: _rebuildable, volumes: _rebuildableVolumes, ...rebuildableRest } = rebuildable;
    expect(rebuildableRest).toEqual(recordsRest);
    const users = entries.filter(([, svc]) => svc.environment?.REDIS_USERNAME);
    expect(users.length).toBe(redisStackUsers().length);
    for (const [name, svc] of users) {
      expect([name, svc.environment!.REDIS_URL, svc.environment!.REDIS_RECORDS_URL]).toEqual([
        name,
        '${REDIS_URL:-redis://redis-rebuildable:6379}',
        '${REDIS_RECORDS_URL:-redis://redis:6379}',
      ]);
      expect([name, svc.depends_on?.redis, svc.depends_on?.['redis-rebuildable']]).toEqual([
        name,
        { condition: 'service_healthy' },
        { condition: 'service_healthy' },
      ]);
    }
    // REDIS_URL without REDIS_RECORDS_URL is refused by the redis-acl step (redis-acl-file.test.ts), given both as set.
    expect(compose.services['redis-acl']!.environment).toEqual(
      expect.objectContaining({
        REDIS_URL_GIVEN: '${REDIS_URL:-}',
        REDIS_RECORDS_URL_GIVEN: '${REDIS_RECORDS_URL:-}',
      }),
    );
  });

  it('behavior: indexers publish no port (replicas can scale) and every service reads the .env file', () => {
    for (const [name, svc] of entries.filter(([n]) => n.startsWith('indexer-'))) {
      expect([name, svc.ports]).toEqual([name, undefined]);
    }
    for (const [name, svc] of entries.filter(([n]) => !['redis', 'redis-rebuildable', 'devnet', 'lb'].includes(n)))
      expect([name, svc.env_file]).toEqual([name, '${ENV_FILE:-.env}']);
    // `up -d --wait` waits for health checks: every long-running service has one (the images'
    // HEALTHCHECK for ours, redis-cli for Redis); only the one-shot and the tools turn it off.
    for (const [name, svc] of entries)
      expect([name, svc.healthcheck?.disable === true]).toEqual([name, ['redis-acl', 'keys'].includes(name)]);
    for (const name of ['redis', 'redis-rebuildable'])
      // The default user is off: a live server answers NOAUTH to a PING without a login.
      expect([name, compose.services[name]!.healthcheck?.test]).toEqual([
        name,
        ['CMD-SHELL', "redis-cli ping | grep -qE '^(PONG|NOAUTH)'"],
      ]);
  });

  it('security: each service is handed only its own secrets folder; no secret in .env or in any environment', () => {
    const secretFolder = (svc: (typeof compose.services)[string]) =>
      (svc.volumes ?? []).filter((v) => v.includes(':/run/secrets/pmm'));
    const owners: Record<string, string> = {
      signer: '${SIGNER_SECRETS:-signer-secrets}:/run/secrets/pmm:ro',
      gateway: '${GATEWAY_SECRETS:-gateway-secrets}:/run/secrets/pmm:ro',
      keys: '${KEYS_SECRETS:-keys-secrets}:/run/secrets/pmm:ro',
      operator: '${OPERATOR_SECRETS:-operator-secrets}:/run/secrets/pmm:ro',
      risk: '${RISK_SECRETS:-risk-secrets}:/run/secrets/pmm:ro',
      ...Object.fromEntries(
        KNOWN_CHAIN_IDS.map((id) => [
          `indexer-${id}`,
          `\${INDEXER_${id}_SECRETS:-indexer-${id}-secrets}:/run/secrets/pmm:ro`,
        ]),
      ),
      ...Object.fromEntries(
        KNOWN_CHAIN_IDS.map((id) => [
          `ledger-${id}`,
          `\${LEDGER_${id}_SECRETS:-ledger-${id}-secrets}:/run/secrets/pmm:ro`,
        ]),
      ),
    };
    for (const [name, svc] of entries.filter(
      ([n]) => !['redis', 'redis-rebuildable', 'devnet', 'redis-acl', 'lb'].includes(n),
    )) {
      expect([name, secretFolder(svc)]).toEqual([name, [owners[name]]]);
      expect([name, svc.environment?.SECRETS_DIR]).toEqual([name, '/run/secrets/pmm']);
      // No secret setting (nor a pointer to one) in the environment compose gives the service.
      const secretNames = Object.keys(svc.environment ?? {}).filter((n) =>
        /^(INTERNAL_TOKEN|DEV_API_KEY|SIGNER_KEY|SIGNER_KEYSTORE_PASSWORD|QUOTER_KEY|REDIS_PASSWORD)/.test(n),
      );
      expect([name, secretNames]).toEqual([name, []]);
      // The shared folders hold no secret: the chains file (devnet) and the config folder.
      expect([name, (svc.volumes ?? []).filter((v) => !v.includes(':/run/secrets/pmm'))]).toEqual([
        name,
        ['${CONFIG_DIR:-./config}:/config:ro', 'devnet:/devnet:ro'],
      ]);
    }
    // The devnet fills each service's volume, mounted nowhere else.
    const devnet = compose.services.devnet!;
    expect(devnet.build).toEqual({ context: '.', target: 'devnet', args: ['NODE_IMAGE'] });
    expect(devnet.volumes).toEqual([
      'devnet:/devnet',
      'signer-secrets:/devnet-secrets/signer',
      'gateway-secrets:/devnet-secrets/gateway',
      ...KNOWN_CHAIN_IDS.map((id) => `indexer-${id}-secrets:/devnet-secrets/indexer-${id}`),
      ...KNOWN_CHAIN_IDS.map((id) => `ledger-${id}-secrets:/devnet-secrets/ledger-${id}`),
      'keys-secrets:/devnet-secrets/keys',
      'operator-secrets:/devnet-secrets/operator',
      'risk-secrets:/devnet-secrets/risk',
      'redis-users-secrets:/devnet-secrets/redis-users',
    ]);
    // .env (every service reads it) carries no secret, not even a devnet one.
    const example = readFileSync(path.join(root, '.env.example'), 'utf8');
    expect(example).toMatch(/^CONFIG_FILE=\/devnet\/chains\.json$/m);
    const assigned = [...example.matchAll(/^([A-Z0-9_]+)=/gm)].map((m) => m[1]!);
    expect(assigned.filter((n) => /^(INTERNAL_TOKEN|DEV_API_KEY|SIGNER_KEY|QUOTER_KEY|SECRETS_DIR)/.test(n))).toEqual(
      [],
    );
  });

  it('behavior: the balancer (lb) publishes the API and reaches every gateway replica, probing /readyz on its operator port', () => {
    const lb = compose.services.lb!;
    expect(lb.ports).toEqual(['${GATEWAY_PORT:-8080}:8080']);
    expect(lb.build).toEqual({ context: '.', target: 'lb', args: ['NODE_IMAGE'] });
    const gateway = compose.services.gateway!.environment!;
    const cfg = readFileSync(path.join(root, 'deploy/compose/haproxy.cfg'), 'utf8');
    expect(cfg).toMatch(/^\s*bind :8080$/m);
    const template =
      /^\s*server-template \S+ (\d+) gateway:(\d+) check port (\d+) .*resolvers docker init-addr none$/m.exec(cfg);
    expect([template?.[2], template?.[3]]).toEqual([gateway.PORT, gateway.OPS_PORT]);
    expect(cfg).toMatch(/^\s*http-check send meth GET uri \/readyz ver HTTP\/1\.1 hdr Host localhost$/m);
    // The balancer's X-Forwarded-For is its peer's address, replacing the client's, and the gateway trusts it.
    expect(cfg).toMatch(/^\s*http-request set-header X-Forwarded-For %\[src\]$/m);
    expect(cfg).not.toMatch(/option forwardfor/);
    expect(gateway.TRUSTED_PROXIES).toBe('${TRUSTED_PROXIES:-172.16.0.0/12,192.168.0.0/16}');
    // The image is built from the file: the Dockerfile copies it and the build context has it.
    expect(readFileSync(path.join(root, 'Dockerfile'), 'utf8')).toContain(
      'COPY deploy/compose/haproxy.cfg /etc/haproxy/haproxy.cfg',
    );
    expect(readFileSync(path.join(root, '.dockerignore'), 'utf8')).toMatch(/^!deploy\/compose$/m);
  });

  it('security: both Redis servers load their users from the ACL file the redis-acl step renders; each process connects as its own user', () => {
    for (const redis of [compose.services.redis!, compose.services['redis-rebuildable']!]) {
      const args = redis.command ?? [];
      expect(args.slice(args.indexOf('--aclfile'), args.indexOf('--aclfile') + 2)).toEqual([
        '--aclfile',
        '/run/redis-acl/users.acl',
      ]);
      expect(redis.volumes).toContain('redis-acl:/run/redis-acl:ro');
      expect(redis.depends_on).toEqual({ 'redis-acl': { condition: 'service_completed_successfully' } });
    }
    const acl = compose.services['redis-acl']!;
    expect(acl.command).toEqual(['node', 'packages/core/dist/redis/redis-acl-file.js']);
    // It reads password files and writes one file: no network, and the passwords read-only.
    expect(acl.network_mode).toBe('none');
    expect(acl.restart).toBe('no');
    expect(acl.volumes).toEqual([
      '${REDIS_USERS_SECRETS:-redis-users-secrets}:/run/secrets/redis-users:ro',
      'redis-acl:/run/redis-acl',
    ]);
    // One compose service per Redis user of redis-acl.ts, named alike, each connecting as it.
    const users = Object.fromEntries(
      entries
        .filter(([, svc]) => svc.environment?.REDIS_USERNAME)
        .map(([n, svc]) => [n, svc.environment!.REDIS_USERNAME]),
    );
    expect(Object.keys(users).sort()).toEqual(
      redisStackUsers()
        .map((u) => u.user)
        .sort(),
    );
    for (const [name, user] of Object.entries(users)) expect(user).toBe(name);
    // The devnet trial lets the gateway seed its development key; the rest of .env.example is production's.
    const example = readFileSync(path.join(root, '.env.example'), 'utf8');
    const devnetSection = example.split(/^# --- Shared/m)[0]!;
    expect(devnetSection).toMatch(/^REDIS_ACL_DEV_KEY=true$/m);
  });

  it('security: every container runs read-only, without capabilities or new privileges, with process and memory limits', () => {
    for (const [name, svc] of entries) {
      expect([name, svc.read_only]).toEqual([name, true]);
      expect([name, svc.cap_drop]).toEqual([name, ['ALL']]);
      expect([name, svc.security_opt]).toEqual([name, ['no-new-privileges:true']]);
      expect([name, typeof svc.pids_limit]).toEqual([name, 'number']);
      const redis = ['redis', 'redis-rebuildable'].includes(name);
      // Redis alone has no memory limit: `maxmemory` bounds it (a container limit would kill it).
      if (!redis) expect([name, svc.mem_limit]).toEqual([name, expect.stringMatching(/^\d+[mg]$/)]);
      // Where a Node process or Hardhat may write besides its volumes.
      if (!redis) expect([name, svc.tmpfs?.some((t) => t.startsWith('/tmp:'))]).toEqual([name, true]);
    }
    // Without capabilities the image's entrypoint cannot chown /data and switch users: Redis runs as its own.
    expect(compose.services.redis!.user).toBe('redis');
    expect(compose.services['redis-rebuildable']!.user).toBe('redis');
  });

  it('behavior: NODE_IMAGE passes from the environment to every build (a registry mirror with `up --build`)', () => {
    const built = entries.filter(([, svc]) => svc.build !== undefined);
    expect(built.map(([n]) => n).sort()).toEqual(
      [
        'devnet',
        'gateway',
        'signer',
        'redis-acl',
        'keys',
        'operator',
        'risk',
        'lb',
        ...KNOWN_CHAIN_IDS.map((id) => `indexer-${id}`),
        ...KNOWN_CHAIN_IDS.map((id) => `ledger-${id}`),
      ].sort(),
    );
    for (const [name, svc] of built)
      expect([name, typeof svc.build === 'object' ? svc.build.args : undefined]).toEqual([name, ['NODE_IMAGE']]);
  });

  it('security: base images are pinned by digest, with the tag beside it', () => {
    const dockerfile = readFileSync(path.join(root, 'Dockerfile'), 'utf8');
    const pin = /^ARG NODE_IMAGE_PIN=(\S+)$/m.exec(dockerfile)?.[1];
    expect(pin).toMatch(/^node:24-bookworm-slim@sha256:[0-9a-f]{64}$/);
    // Before the first FROM; an empty NODE_IMAGE (Compose v1 passes unset build args so) keeps the pin.
    expect(dockerfile.split(/^FROM /m)[0]).toContain(`ARG NODE_IMAGE_PIN=${pin}\nARG NODE_IMAGE=\n`);
    const froms = [...dockerfile.matchAll(/^FROM (\S+)/gm)].map((m) => m[1]);
    expect(froms[0]).toBe('${NODE_IMAGE:-${NODE_IMAGE_PIN}}');
    expect(froms.slice(1).every((f) => f === 'base' || f === 'build')).toBe(true);
    const images = entries.flatMap(([, svc]) => {
      const image = (svc as { image?: string }).image;
      return image ? [image] : [];
    });
    const external = [...new Set(images.filter((i) => !/^pmm-(quote-[a-z]+|operator):local$/.test(i)))];
    expect(external).toHaveLength(1); // Redis (both servers): its tag beside its digest, overridable by REDIS_IMAGE
    expect(external[0]).toMatch(/^\$\{REDIS_IMAGE:-redis:7-alpine@sha256:[0-9a-f]{64}\}$/);
  });

  it('behavior: the images build non-interactively on Node 24, run as non-root, with health checks and OCI labels', () => {
    const dockerfile = readFileSync(path.join(root, 'Dockerfile'), 'utf8');
    const stages = dockerfile.split(/^FROM /m).slice(1);
    expect(stages[0]).toMatch(/^\S+ AS base\s*(#[^\n]*\n\s*)*$/);
    for (const stage of stages.slice(1)) expect(stage).toMatch(/^(base|build) AS /);
    expect(stages[1]).toMatch(/^ENV CI=true$/m);
    const named = (name: string) => stages.find((s) => new RegExp(`^\\S+ AS ${name}\\b`).test(s))!;
    // The last stage is the default target: the runtime image, not the devnet.
    expect(stages.at(-1)).toBe(named('runtime'));
    for (const name of ['runtime', 'devnet']) {
      const stage = named(name);
      expect(stage).toMatch(/^USER node$/m);
      expect(stage).toMatch(/^HEALTHCHECK /m);
      expect(stage).toContain('org.opencontainers.image.title');
    }
    // The repository's license (LICENSE), on every image that carries labels.
    expect(readFileSync(path.join(root, 'LICENSE'), 'utf8')).toMatch(/^MIT License/);
    const licenses = [...dockerfile.matchAll(/org\.opencontainers\.image\.licenses="([^"]*)"/g)].map((m) => m[1]);
    expect(licenses.length).toBeGreaterThanOrEqual(3);
    expect(new Set(licenses)).toEqual(new Set(['MIT']));
    expect(named('runtime')).not.toMatch(/hardhat|tsc|typescript/i);
  });
});
