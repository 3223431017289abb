/**
 * docker-compose.yml's Redis users, without Docker: the `redis-acl` step's program
 * (packages/core/dist/redis/redis-acl-file.js) renders the ACL file from the users' password files, a
 * real redis-server loads it (`--aclfile`, as compose starts Redis), the default user can only
 * PING, and each process's settings (REDIS_USERNAME, its redis_password in SECRETS_DIR, as
 * compose gives them) connect it as its own user, refused outside its role.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  createRedis,
  loadConfig,
  redisConnectionUrls,
  redisKeys,
  redisReady,
  redisStackUsers,
  SHARED_SETTINGS,
  type RedisClient,
} from '@pmm/core';
import { commandOutcome, privateRedis, type PrivateRedis } from '@pmm/testkit';

const root = path.resolve(__dirname, '..', '..', '..', '..');
const program = path.join(root, 'packages/core/dist/redis/redis-acl-file.js');
const keys = redisKeys('pmm');
const work = mkdtempSync(path.join(tmpdir(), 'pmm-acl-file-'));
const usersDir = path.join(work, 'redis-users');
const aclFile = path.join(work, 'acl', 'users.acl');
const passwordOf = (user: string) => `${user}-compose-password-0123456789`;

let server: PrivateRedis;
const clients: RedisClient[] = [];

function render(env: Record<string, string> = {}) {
  return spawnSync(process.execPath, [program], {
    encoding: 'utf8',
    env: { PATH: process.env.PATH, REDIS_USERS_DIR: usersDir, REDIS_ACL_FILE: aclFile, ...env },
  });
}

beforeAll(async () => {
  mkdirSync(usersDir);
  mkdirSync(path.dirname(aclFile));
  for (const { user } of redisStackUsers()) writeFileSync(path.join(usersDir, user), `${passwordOf(user)}\n`);
  const rendered = render({ REDIS_ACL_DEV_KEY: 'true' });
  expect(rendered.stderr).toBe('');
  expect(rendered.status).toBe(0);
  server = await privateRedis({ args: ['--aclfile', aclFile] });
}, 30_000);

afterAll(async () => {
  for (const c of clients) c.disconnect();
  await server?.stop();
  rmSync(work, { recursive: true, force: true });
});

describe("compose's Redis users (redis-acl-file.js)", () => {
  it('security: the ACL file holds every user with its password hashed, never the password, readable by Redis', () => {
    const text = readFileSync(aclFile, 'utf8');
    const users = [...text.matchAll(/^user (\S+) /gm)].map((m) => m[1]);
    expect(users.sort()).toEqual(['default', ...redisStackUsers().map((u) => u.user)].sort());
    for (const { user } of redisStackUsers()) expect(text).not.toContain(passwordOf(user));
    // Redis runs as its own user in compose: the file (hashes only) is world-readable, not writable.
    expect(statSync(aclFile).mode & 0o777).toBe(0o644);
  });

  it('security: a connection that logs in as no one (the default user, off) can do nothing, PING included', async () => {
    // No ready check (INFO, refused to this user): the subscriber kind of connection skips it.
    const anonymous = createRedis(server.url, { name: 'acl-file-default', role: 'subscriber' });
    clients.push(anonymous);
    expect(await commandOutcome(() => anonymous.ping())).toBe('NOAUTH');
    expect(await commandOutcome(() => anonymous.get(keys.apiKey('f'.repeat(64))))).toBe('NOAUTH');
    expect(await commandOutcome(() => anonymous.call('FLUSHALL'))).toBe('NOAUTH');
  });

  it("security: a service's compose settings (REDIS_USERNAME, redis_password in SECRETS_DIR) connect it as its own user, refused outside its role", async () => {
    const secrets = path.join(work, 'indexer-8453');
    mkdirSync(secrets);
    writeFileSync(path.join(secrets, 'redis_password'), `${passwordOf('indexer-8453')}\n`);
    // The settings every service shares, from the environment compose gives an indexer.
    const config = loadConfig(SHARED_SETTINGS, {
      env: { REDIS_URL: server.url, REDIS_USERNAME: 'indexer-8453', SECRETS_DIR: secrets },
      file: {},
    });
    const indexer = createRedis(redisConnectionUrls(config).redisUrl, { name: 'acl-file-indexer' });
    clients.push(indexer);
    await redisReady(indexer);
    expect(await indexer.set(keys.book(8453), '{}')).toBe('OK');
    expect(await commandOutcome(() => indexer.set(keys.apiKey('f'.repeat(64)), '{}'))).toBe('NOPERM');
    expect(await commandOutcome(() => indexer.del(keys.audit(8453)))).toBe('NOPERM');
    expect(await commandOutcome(() => indexer.set(keys.book(56), '{}'))).toBe('NOPERM');
    expect(await commandOutcome(() => indexer.call('CONFIG', 'GET', '*'))).toBe('NOPERM');
    expect(await commandOutcome(() => indexer.call('SCRIPT', 'FLUSH'))).toBe('NOPERM');
    expect(await commandOutcome(() => indexer.call('FUNCTION', 'FLUSH'))).toBe('NOPERM');
  });

  it('behavior: the gateway may seed the development key only when REDIS_ACL_DEV_KEY=true', () => {
    const gatewayLine = (text: string) => /^user gateway .*$/m.exec(text)![0];
    const withDevKey = gatewayLine(readFileSync(aclFile, 'utf8'));
    expect(withDevKey).toContain('~pmm:integrator:dev');
    const plainFile = path.join(work, 'acl', 'plain.acl');
    expect(render({ REDIS_ACL_FILE: plainFile }).status).toBe(0);
    expect(gatewayLine(readFileSync(plainFile, 'utf8'))).not.toContain('~pmm:integrator:dev');
  });

  it("error: REDIS_URL given without REDIS_RECORDS_URL fails the step before any file is written (the records would go to compose's own `redis`), never printing the URL", () => {
    const file = (name: string) => path.join(work, 'acl', name);
    const alone = render({ REDIS_ACL_FILE: file('alone.acl'), REDIS_URL_GIVEN: 'redis://u:url-password@mine:6379' });
    expect(alone.status).toBe(1);
    expect(alone.stderr).toMatch(/REDIS_URL is set but REDIS_RECORDS_URL is not: .*Set REDIS_RECORDS_URL in \.env/);
    expect(`${alone.stdout}${alone.stderr}`).not.toContain('url-password');
    expect(existsSync(file('alone.acl'))).toBe(false);
    // Both given, either alone but REDIS_URL, or neither (compose's two servers): the file is written.
    for (const [name, env] of [
      ['both.acl', { REDIS_URL_GIVEN: 'redis://mine:6379', REDIS_RECORDS_URL_GIVEN: 'redis://mine:6379' }],
      ['records.acl', { REDIS_RECORDS_URL_GIVEN: 'redis://records:6379' }],
      ['neither.acl', { REDIS_URL_GIVEN: '', REDIS_RECORDS_URL_GIVEN: '' }],
    ] as const) {
      const r = render({ REDIS_ACL_FILE: file(name), ...env });
      expect([name, r.status, r.stderr]).toEqual([name, 0, '']);
    }
  });

  it('behavior: a missing or short password file fails the step, naming the user', () => {
    rmSync(path.join(usersDir, 'operator'));
    const missing = render({ REDIS_ACL_FILE: path.join(work, 'acl', 'missing.acl') });
    expect(missing.status).toBe(1);
    expect(missing.stderr).toContain('no password file for operator');
    writeFileSync(path.join(usersDir, 'operator'), 'short\n');
    const short = render({ REDIS_ACL_FILE: path.join(work, 'acl', 'short.acl') });
    expect(short.status).toBe(1);
    expect(short.stderr).toContain('operator is shorter than 16 characters');
  });
});
