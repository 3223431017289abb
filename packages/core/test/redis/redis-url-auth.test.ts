/**
 * Sentinel and Cluster URLs with an ACL user and with TLS, as managed Redis services need them,
 * against real redis-server processes private to this test: a Sentinel whose master admits only
 * ACL users, a Cluster with an ACL user, and both again on TLS only (a self-signed certificate the
 * client trusts through NODE_EXTRA_CA_CERTS, in a child process). A Sentinel URL without its
 * master name is refused at start, never guessed.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  freePort,
  privateRedisCluster,
  redisTlsArgs,
  selfSignedCert,
  startSentinel,
  stopAll,
  waitForPort,
  type PrivateRedisCluster,
  type TlsCert,
} from '@pmm/testkit';
import {
  ConfigError,
  createRedis,
  loadConfig,
  parseMultiHostUrl,
  redisConnectionUrls,
  redisReady,
  resolveDurabilityMode,
  SHARED_SETTINGS,
} from '@pmm/core';

const ROOT = path.resolve(__dirname, '..', '..', '..', '..');
/**
 * ACL rules (`user` lines without the word): the service users of these tests (the second one
 * with URL delimiters in its password, as a generated one may have), the sentinels' own user on
 * the master.
 */
const ROLE_PASSWORD = 'p@ss/w:rd%1,x';
const APP_USER = ['app on >app-password-1 ~* &* +@all', `indexer-8453 on >${ROLE_PASSWORD} ~* &* +@all`];
const ACL_ONLY = ['default off', 'sentinel on >sentinel-password-1 allchannels +@all', ...APP_USER];

/** `--user <words of the rule>`: redis-server joins the words after an option into its config line. */
const userArgs = (rules: string[]) => rules.flatMap((rule) => ['--user', ...rule.split(' ')]);

/**
 * The URL a process connects with when REDIS_URL carries no credentials and its user and password
 * come as REDIS_USERNAME and REDIS_PASSWORD_FILE (how docker-compose.yml and the Helm chart hand them over).
 */
function urlFromSettings(redisUrl: string, user: string, password: string): string {
  const file = path.join(mkdtempSync(path.join(tmpdir(), 'redis-password-')), 'password');
  writeFileSync(file, `${password}\n`);
  const settings = {
    redisUrl: SHARED_SETTINGS.redisUrl,
    redisUsername: SHARED_SETTINGS.redisUsername,
    redisPassword: SHARED_SETTINGS.redisPassword,
  };
  const env = { REDIS_URL: redisUrl, REDIS_USERNAME: user, REDIS_PASSWORD_FILE: file };
  return redisConnectionUrls(loadConfig(settings, { env, file: {} })).redisUrl;
}

/** What support/redis-whoami.ts reports for this URL, run with the certificate trusted. */
function whoamiInChild(url: string, cert: TlsCert): { whoami: string[]; value: string } {
  const r = spawnSync(
    process.execPath,
    [
      '-r',
      path.join(ROOT, 'scripts', 'lib', 'ts-register.cjs'),
      path.join(__dirname, '..', 'support', 'redis-whoami.ts'),
    ],
    {
      encoding: 'utf8',
      env: { ...process.env, PMM_TEST_REDIS_URL: url, NODE_EXTRA_CA_CERTS: cert.certFile },
      timeout: 40_000,
    },
  );
  if (r.status !== 0) throw new Error(`redis-whoami failed: ${r.stderr}`);
  return JSON.parse(r.stdout) as { whoami: string[]; value: string };
}

describe('Sentinel and Cluster URLs: parsing', () => {
  it('behavior: user name, password, hosts, master and TLS are read from the URL', () => {
    expect(parseMultiHostUrl('rediss-sentinel://app:p%40ss@s1:26380,s2/pmm')).toEqual({
      kind: 'sentinel',
      tls: true,
      username: 'app',
      password: 'p@ss',
      hosts: [
        { host: 's1', port: 26380 },
        { host: 's2', port: 26379 },
      ],
      master: 'pmm',
    });
    expect(parseMultiHostUrl('redis-cluster://:secret@n1:7000,n2:7001')).toEqual({
      kind: 'cluster',
      tls: false,
      password: 'secret',
      hosts: [
        { host: 'n1', port: 7000 },
        { host: 'n2', port: 7001 },
      ],
    });
    expect(parseMultiHostUrl('redis://127.0.0.1:6379')).toBeUndefined();
  });

  it('behavior: a Sentinel URL’s query gives the sentinels’ own user and password, percent-decoded', () => {
    expect(
      parseMultiHostUrl('redis-sentinel://app:pw@s1:26379/pmm?sentinelUsername=watcher&sentinelPassword=a%26b%3Dc'),
    ).toMatchObject({
      username: 'app',
      password: 'pw',
      master: 'pmm',
      sentinelUsername: 'watcher',
      sentinelPassword: 'a&b=c',
    });
  });

  it('error: any other parameter, one given twice, a sentinel user without its password, a Cluster URL’s query: refused, the value never echoed', () => {
    const refusal = (url: string) => {
      try {
        parseMultiHostUrl(url);
      } catch (err) {
        return (err as Error).message;
      }
      return 'accepted';
    };
    const misspelt = refusal('redis-sentinel://s1:26379/pmm?sentinelPasword=hunter22-secret');
    expect(misspelt).toMatch(/takes only sentinelUsername and sentinelPassword as parameters, not "sentinelPasword"/);
    expect(misspelt).not.toMatch(/hunter22/);
    expect(refusal('redis-sentinel://s1:26379/pmm?sentinelPassword=a&sentinelPassword=b')).toMatch(
      /gives sentinelPassword twice/,
    );
    expect(refusal('redis-sentinel://s1:26379/pmm?sentinelUsername=watcher')).toMatch(/needs sentinelPassword/);
    expect(refusal('redis-cluster://c1:7000?sentinelPassword=hunter22-secret')).toMatch(/takes no parameters/);
    // Without its master name, the query is not taken for part of a host (and echoed).
    const noMaster = refusal('redis-sentinel://s1:26379?sentinelPassword=hunter22-secret');
    expect(noMaster).toMatch(/must end with \/<master name>/);
    expect(noMaster).not.toMatch(/hunter22/);
  });

  it('behavior: REDIS_DURABILITY=auto waits for replicas on the TLS forms too', () => {
    expect(resolveDurabilityMode('auto', 'rediss-sentinel://app:pw@s1:26379/pmm')).toBe('replica');
    expect(resolveDurabilityMode('auto', 'rediss-cluster://app:pw@n1:6379')).toBe('replica');
    expect(resolveDurabilityMode('auto', 'rediss://app:pw@host:6379')).toBe('fsync');
  });

  it('error: a Sentinel URL without its master name stops the start with a message that says so', () => {
    const load = (url: string) => () =>
      loadConfig({ redisUrl: SHARED_SETTINGS.redisUrl }, { env: { REDIS_URL: url }, file: {} });
    expect(load('redis-sentinel://app:secret-password@s1:26379,s2:26379')).toThrow(ConfigError);
    expect(load('redis-sentinel://app:secret-password@s1:26379,s2:26379/')).toThrow(
      /REDIS_URL \(redisUrl\): a redis-sentinel:\/\/ URL must end with \/<master name>/,
    );
    // The password is never echoed.
    expect(load('redis-sentinel://app:secret-password@s1:26379')).not.toThrow(/secret-password/);
    expect(() => createRedis('rediss-sentinel://s1:26379', { name: 'x' })).toThrow(/must end with \/<master name>/);
    expect(load('rediss-sentinel://app:secret-password@s1:26379/pmm')()).toEqual({
      redisUrl: 'rediss-sentinel://app:secret-password@s1:26379/pmm',
    });
  });
});

describe('Sentinel URL with an ACL user', () => {
  const children: ChildProcess[] = [];
  let sentinelPort = 0;
  let tlsSentinelPort = 0;
  let cert: TlsCert;

  /** A master that admits only ACL users, and a sentinel that monitors it as `pmm-master`. */
  async function startPair(tls?: TlsCert): Promise<number> {
    const [masterPort, port] = [await freePort(), await freePort()];
    const transport = tls ? redisTlsArgs(tls, masterPort) : ['--port', String(masterPort)];
    children.push(
      spawn('redis-server', [...transport, '--bind', '127.0.0.1', '--save', '', ...userArgs(ACL_ONLY)], {
        stdio: 'ignore',
      }),
    );
    await waitForPort(masterPort);
    const sentinelTransport = tls
      ? [
          'port 0',
          `tls-port ${port}`,
          `tls-cert-file ${tls.certFile}`,
          `tls-key-file ${tls.keyFile}`,
          `tls-ca-cert-file ${tls.certFile}`,
          'tls-auth-clients no',
          // The sentinel reaches the master over TLS too.
          'tls-replication yes',
        ]
      : [`port ${port}`];
    children.push(
      await startSentinel(port, [
        ...sentinelTransport,
        `sentinel monitor pmm-master 127.0.0.1 ${masterPort} 1`,
        'sentinel auth-user pmm-master sentinel',
        'sentinel auth-pass pmm-master sentinel-password-1',
      ]),
    );
    return port;
  }

  beforeAll(async () => {
    cert = selfSignedCert();
    sentinelPort = await startPair();
    tlsSentinelPort = await startPair(cert);
  }, 30_000);

  afterAll(() => stopAll(children));

  it("behavior: the client authenticates to the master as the URL's user", async () => {
    const client = createRedis(`redis-sentinel://app:app-password-1@127.0.0.1:${sentinelPort}/pmm-master`, {
      name: 'sentinel-acl',
    });
    try {
      await redisReady(client, 10_000);
      expect(await client.call('ACL', 'WHOAMI')).toBe('app');
      await client.set('pmm-test:sentinel-acl', 'ok', 'EX', 10);
      expect(await client.get('pmm-test:sentinel-acl')).toBe('ok');
    } finally {
      client.disconnect();
    }
  });

  it('behavior: REDIS_USERNAME and REDIS_PASSWORD_FILE on a URL without credentials: the client is that user', async () => {
    const url = urlFromSettings(`redis-sentinel://127.0.0.1:${sentinelPort}/pmm-master`, 'indexer-8453', ROLE_PASSWORD);
    const client = createRedis(url, { name: 'sentinel-acl-settings' });
    try {
      await redisReady(client, 10_000);
      expect(await client.call('ACL', 'WHOAMI')).toBe('indexer-8453');
    } finally {
      client.disconnect();
    }
  });

  it('error: the password alone (the default user, turned off here) is refused', async () => {
    const client = createRedis(`redis-sentinel://:app-password-1@127.0.0.1:${sentinelPort}/pmm-master`, {
      name: 'sentinel-acl-no-user',
    });
    try {
      const refused = new Promise<string>((resolve) => client.on('error', (err: Error) => resolve(err.message)));
      expect(await refused).toMatch(/WRONGPASS/);
    } finally {
      client.disconnect();
    }
  });

  it('behavior: rediss-sentinel:// reaches the sentinel and the master over TLS, as the ACL user', () => {
    const url = `rediss-sentinel://app:app-password-1@127.0.0.1:${tlsSentinelPort}/pmm-master`;
    expect(whoamiInChild(url, cert)).toEqual({ whoami: ['app'], value: 'ok' });
  });
});

describe('Cluster URL with an ACL user', () => {
  let cluster: PrivateRedisCluster;
  let tlsCluster: PrivateRedisCluster;
  let cert: TlsCert;

  beforeAll(async () => {
    cert = selfSignedCert();
    // The default user stays on (redis-cli --cluster create uses it); the client must pick `app`.
    cluster = await privateRedisCluster({ args: userArgs(APP_USER) });
    tlsCluster = await privateRedisCluster({ args: userArgs(APP_USER), tls: cert });
  }, 60_000);

  afterAll(async () => {
    await cluster?.stop();
    await tlsCluster?.stop();
  });

  it("behavior: every master connection authenticates as the URL's user", async () => {
    const url = cluster.url.replace('redis-cluster://', 'redis-cluster://app:app-password-1@');
    const client = createRedis(url, { name: 'cluster-acl' });
    try {
      await redisReady(client, 15_000);
      for (const key of ['{a}x', '{b}x', '{c}x']) await client.set(`pmm-test:${key}`, 'ok', 'EX', 10);
      const masters = (client as import('ioredis').Cluster).nodes('master');
      expect(masters).toHaveLength(3);
      expect(await Promise.all(masters.map((n) => n.call('ACL', 'WHOAMI')))).toEqual(['app', 'app', 'app']);
    } finally {
      client.disconnect();
    }
  });

  it('behavior: REDIS_USERNAME and REDIS_PASSWORD_FILE on a URL without credentials: every master connection is that user', async () => {
    const client = createRedis(urlFromSettings(cluster.url, 'indexer-8453', ROLE_PASSWORD), {
      name: 'cluster-acl-settings',
    });
    try {
      await redisReady(client, 15_000);
      for (const key of ['{a}x', '{b}x', '{c}x']) await client.set(`pmm-test:${key}`, 'ok', 'EX', 10);
      const masters = (client as import('ioredis').Cluster).nodes('master');
      expect(await Promise.all(masters.map((n) => n.call('ACL', 'WHOAMI')))).toEqual(Array(3).fill('indexer-8453'));
    } finally {
      client.disconnect();
    }
  });

  it('behavior: rediss-cluster:// reaches every master over TLS, as the ACL user', () => {
    expect(tlsCluster.url).toMatch(/^rediss-cluster:\/\//);
    const url = tlsCluster.url.replace('rediss-cluster://', 'rediss-cluster://app:app-password-1@');
    expect(whoamiInChild(url, cert)).toEqual({ whoami: ['app', 'app', 'app'], value: 'ok' });
  });
});
