/**
 * Sentinels that ask for a password of their own (Sentinel's `requirepass`, and ACL users), as
 * charted and managed Sentinel deployments often run them, against real redis-server processes
 * private to this test: a master that admits only its ACL user, and a sentinel with its own
 * password and its own ACL user. The sentinels' credentials (REDIS_SENTINEL_USERNAME,
 * REDIS_SENTINEL_PASSWORD_FILE) and the data nodes' (REDIS_USERNAME, REDIS_PASSWORD_FILE) each
 * reach their own side: the address lookup and the fail-over detector's subscription on the
 * sentinel, the commands on the master.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { freePort, startSentinel, stopAll, until, waitForPort } from '@pmm/testkit';
import {
  closeRedis,
  createRedis,
  loadConfig,
  redisConnectionUrls,
  redisReady,
  REDIS_CONNECTION_SETTINGS,
  type RedisClient,
} from '@pmm/core';

const SENTINEL_PASSWORD = 'sentinel-own-p@ss&word=1';
const WATCHER_PASSWORD = 'watcher-password-1';
const APP_PASSWORD = 'app-password-1';

const children: ChildProcess[] = [];
let sentinelPort = 0;
let admin: RedisClient;

/** A file holding `value`, as a secrets mount gives it. */
function secretFile(value: string): string {
  const file = path.join(mkdtempSync(path.join(tmpdir(), 'sentinel-secret-')), 'value');
  writeFileSync(file, `${value}\n`);
  return file;
}

/** The URL a process connects with, from its environment (files for the secrets). */
function urlFrom(env: Record<string, string>): string {
  return redisConnectionUrls(
    loadConfig(REDIS_CONNECTION_SETTINGS, {
      env: {
        REDIS_URL: `redis-sentinel://127.0.0.1:${sentinelPort}/pmm-master`,
        REDIS_USERNAME: 'app',
        REDIS_PASSWORD_FILE: secretFile(APP_PASSWORD),
        ...env,
      },
      file: {},
    }),
  ).redisUrl;
}

/** The sentinel's clients subscribed to its events (a fail-over detector), by user. */
async function subscribedUsers(): Promise<string[]> {
  const list = String(await admin.call('CLIENT', 'LIST'));
  return list
    .split('\n')
    .filter((line) => /\b(p?sub)=[1-9]/.test(line))
    .map((line) => /\buser=(\S+)/.exec(line)?.[1] ?? '?');
}

beforeAll(async () => {
  const masterPort = await freePort();
  sentinelPort = await freePort();
  children.push(
    spawn(
      'redis-server',
      [
        ...['--port', String(masterPort), '--bind', '127.0.0.1', '--save', ''],
        ...['--user', 'default', 'off'],
        ...['--user', 'app', 'on', `>${APP_PASSWORD}`, '~*', '&*', '+@all'],
        ...['--user', 'sentinel', 'on', '>sentinel-to-master-1', 'allchannels', '+@all'],
      ],
      { stdio: 'ignore' },
    ),
  );
  await waitForPort(masterPort);
  children.push(
    await startSentinel(sentinelPort, [
      `port ${sentinelPort}`,
      `requirepass "${SENTINEL_PASSWORD}"`,
      `user watcher on >${WATCHER_PASSWORD} allchannels +@all`,
      `sentinel monitor pmm-master 127.0.0.1 ${masterPort} 1`,
      'sentinel auth-user pmm-master sentinel',
      'sentinel auth-pass pmm-master sentinel-to-master-1',
    ]),
  );
  admin = createRedis(`redis://:${encodeURIComponent(SENTINEL_PASSWORD)}@127.0.0.1:${sentinelPort}`, {
    name: 'sentinel-admin',
  });
  await redisReady(admin, 10_000);
}, 30_000);

afterAll(async () => {
  admin?.disconnect();
  await stopAll(children);
});

it("error: without the sentinels' password the client never connects, and the error says the sentinel refused it", async () => {
  const client = createRedis(urlFrom({}), { name: 'no-sentinel-password' });
  try {
    const refused = new Promise<string>((resolve) => client.on('error', (err: Error) => resolve(err.message)));
    expect(await refused).toMatch(/NOAUTH|Authentication required/);
    await expect(redisReady(client, 1_000)).rejects.toThrow(/not ready/);
  } finally {
    await closeRedis(client);
  }
});

it('behavior: REDIS_SENTINEL_PASSWORD_FILE: the sentinel lookup and the fail-over detector authenticate; the master sees the data user', async () => {
  const client = createRedis(urlFrom({ REDIS_SENTINEL_PASSWORD_FILE: secretFile(SENTINEL_PASSWORD) }), {
    name: 'sentinel-password',
  });
  try {
    await redisReady(client, 10_000);
    expect(await client.call('ACL', 'WHOAMI')).toBe('app');
    await client.set('pmm-test:sentinel-password', 'ok', 'EX', 10);
    expect(await client.get('pmm-test:sentinel-password')).toBe('ok');
    // The fail-over detector holds a subscription on the sentinel, as the sentinels' default user.
    await until(
      async () => (await subscribedUsers()).includes('default'),
      5_000,
      "the fail-over detector's subscription",
    );
  } finally {
    await closeRedis(client);
  }
});

it("behavior: REDIS_SENTINEL_USERNAME: the sentinels' ACL user, for the lookup and the subscription", async () => {
  const client = createRedis(
    urlFrom({ REDIS_SENTINEL_USERNAME: 'watcher', REDIS_SENTINEL_PASSWORD_FILE: secretFile(WATCHER_PASSWORD) }),
    { name: 'sentinel-acl-user' },
  );
  try {
    await redisReady(client, 10_000);
    expect(await client.call('ACL', 'WHOAMI')).toBe('app');
    await until(async () => (await subscribedUsers()).includes('watcher'), 5_000, "the watcher's subscription");
  } finally {
    await closeRedis(client);
  }
});

it('error: a wrong sentinel password is refused by the sentinel (WRONGPASS)', async () => {
  const client = createRedis(urlFrom({ REDIS_SENTINEL_PASSWORD_FILE: secretFile('not-the-password') }), {
    name: 'wrong-sentinel-password',
  });
  try {
    const refused = new Promise<string>((resolve) => client.on('error', (err: Error) => resolve(err.message)));
    expect(await refused).toMatch(/WRONGPASS|invalid username-password/);
  } finally {
    await closeRedis(client);
  }
});
