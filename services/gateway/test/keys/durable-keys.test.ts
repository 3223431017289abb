/**
 * Integrator data is the only data the service owns: it must survive a Redis restart (AOF, as
 * docker-compose.yml and `npm start` run Redis) and move between Redis servers through the key
 * CLI's export/import with the keys still hashed. Real redis-server processes throughout.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createRedis, redisReady, type RedisClient } from '@pmm/core';
import { ApiKeyStore, DEV_INTEGRATOR_ID, hashApiKey } from '@pmm/gateway';
import { privateRedis, type PrivateRedis } from '@pmm/testkit';
import { runKeysCommand } from '../../src/keys/keys-command';
import { keepDevKeySeeded } from '../../src/keys/dev-key';

const PREFIX = 'pmm';
const dirs: string[] = [];
const servers: PrivateRedis[] = [];
const clients: RedisClient[] = [];

afterAll(async () => {
  for (const c of clients) c.disconnect();
  await Promise.all(servers.map((s) => s.stop('SIGTERM')));
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'durable-keys-'));
  dirs.push(dir);
  return dir;
}

async function connect(server: PrivateRedis): Promise<{ redis: RedisClient; store: ApiKeyStore }> {
  const redis = createRedis(server.url, { name: 'durable-keys-test' });
  clients.push(redis);
  await redisReady(redis);
  return { redis, store: new ApiKeyStore(redis, PREFIX) };
}

async function cli(
  target: { redis: RedisClient; store: ApiKeyStore },
  ...argv: string[]
): Promise<{ code: number; out: string }> {
  const lines: string[] = [];
  const code = await runKeysCommand(argv, target.store, (l) => lines.push(l), { redis: target.redis, prefix: PREFIX });
  return { code, out: lines.join('\n') };
}

const keyOf = (out: string) => /^API key: (pmm_\S+)$/m.exec(out)![1]!;
const USER = '0x00000000000000000000000000000000000000aa';

/** Until the restarted server answers (ioredis reconnects by itself). */
async function waitFor<T>(fn: () => Promise<T>): Promise<T> {
  for (let i = 0; ; i++) {
    try {
      return await fn();
    } catch (err) {
      if (i > 100) throw err;
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}

describe('durable integrator data', () => {
  it('behavior: every record survives a restart of a redis-server running with AOF', async () => {
    const server = await privateRedis({
      dir: tempDir(),
      args: ['--appendonly', 'yes', '--appendfsync', 'everysec', '--maxmemory-policy', 'noeviction'],
    });
    servers.push(server);
    const target = await connect(server);
    const created = await cli(target, 'create', '--integrator', 'acme', '--whitelist', USER, '--rate', '50/10');
    expect(created.code).toBe(0);
    const key = keyOf(created.out);
    await cli(target, 'update', '--integrator', 'acme', '--origin-rate', '8453=7');
    await cli(target, 'create', '--integrator', 'beta', '--chains', '56');
    const before = await cli(target, 'export');

    await server.stop('SIGTERM');
    await server.start();

    const after = await waitFor(() => target.store.lookupHash(hashApiKey(key)));
    expect(after?.integrator).toMatchObject({ id: 'acme', whitelist: [USER], originRate: { '8453': '7' } });
    expect(after?.integrator.rateLimit).toEqual({ requests: 50, windowSeconds: 10 });
    const { exportedAt: _a, ...was } = JSON.parse(before.out);
    const { exportedAt: _b, ...now } = JSON.parse((await cli(target, 'export')).out);
    expect(now).toEqual(was);
    expect(now.integrators.map((i: { id: string }) => i.id)).toEqual(['acme', 'beta']);
  });

  it('behavior: without persistence the same restart loses everything (what the check warns about)', async () => {
    const server = await privateRedis();
    servers.push(server);
    const target = await connect(server);
    const key = keyOf((await cli(target, 'create', '--integrator', 'gone')).out);
    await server.stop('SIGTERM');
    await server.start();
    expect(await waitFor(() => target.store.lookupHash(hashApiKey(key)))).toBeUndefined();
  });

  it('behavior: export then import into an empty Redis restores every integrator and key, keys still hashed', async () => {
    const source = await privateRedis();
    const empty = await privateRedis();
    servers.push(source, empty);
    const from = await connect(source);
    const to = await connect(empty);
    const acme = keyOf((await cli(from, 'create', '--integrator', 'acme', '--whitelist', USER)).out);
    const beta = keyOf((await cli(from, 'create', '--integrator', 'beta')).out);
    await cli(from, 'rotate', '--integrator', 'beta'); // two keys for beta
    await cli(from, 'disable', '--key', beta.slice(0, 12));
    // An integrator whose keys were all revoked is still exported.
    const gamma = keyOf((await cli(from, 'create', '--integrator', 'gamma')).out);
    await cli(from, 'revoke', '--key', gamma.slice(0, 12));

    const file = path.join(tempDir(), 'backup.json');
    expect((await cli(from, 'export', '--file', file)).out).toBe(
      `exported 3 integrators, 3 keys and 1 revoked key hashes to ${file}`,
    );
    const text = readFileSync(file, 'utf8');
    for (const k of [acme, beta]) {
      expect(text).not.toContain(k);
      expect(text).toContain(hashApiKey(k));
    }

    expect(await to.redis.dbsize()).toBe(0);
    const imported = await cli(to, 'import', '--file', file);
    expect(imported).toEqual({ code: 0, out: 'imported 3 integrators and 3 keys; 1 revoked keys held revoked' });
    expect(await to.store.isRevoked(hashApiKey(gamma))).toBe(true);
    expect((await to.store.lookupHash(hashApiKey(acme)))?.integrator.whitelist).toEqual([USER]);
    expect((await to.store.lookupHash(hashApiKey(beta)))?.key.disabled).toBe(true);
    expect(await to.store.getIntegrator('gamma')).toMatchObject({ id: 'gamma' });
    const strip = (doc: string) => ({ ...JSON.parse(doc), exportedAt: '' });
    expect(strip((await cli(to, 'export')).out)).toEqual(strip(text));
  });

  it('security: a backup older than a revocation or a disable never undoes it; the revocations travel with exports', async () => {
    const server = await privateRedis();
    const fresh = await privateRedis();
    servers.push(server, fresh);
    const here = await connect(server);
    const leaked = keyOf((await cli(here, 'create', '--integrator', 'acme')).out);
    const betaKey = keyOf((await cli(here, 'create', '--integrator', 'beta')).out);
    const before = path.join(tempDir(), 'before.json');
    await cli(here, 'export', '--file', before);
    // After the backup: acme's key leaks and is revoked, beta's key and beta itself are disabled.
    await cli(here, 'revoke', '--key', leaked.slice(0, 12));
    await cli(here, 'disable', '--key', betaKey.slice(0, 12));
    await cli(here, 'update', '--integrator', 'beta', '--disable');
    const after = path.join(tempDir(), 'after.json');
    await cli(here, 'export', '--file', after);
    expect(JSON.parse(readFileSync(after, 'utf8')).revokedApiKeys).toEqual([hashApiKey(leaked)]);

    const refused = await cli(here, 'import', '--file', before);
    expect(refused.code).toBe(2);
    expect(refused.out).toContain(`(keyId "${leaked.slice(0, 12)}"): this key was revoked here; --restore-revoked`);
    expect(await here.store.lookupHash(hashApiKey(leaked))).toBeUndefined();

    // Restored into another Redis, the later export keeps the key revoked there too.
    const there = await connect(fresh);
    expect((await cli(there, 'import', '--file', after)).code).toBe(0);
    expect(await there.store.isRevoked(hashApiKey(leaked))).toBe(true);
    expect((await cli(there, 'import', '--file', before)).code).toBe(2);

    // Only on an explicit flag does the revoked key come back; what was disabled here stays so.
    const forced = await cli(here, 'import', '--file', before, '--restore-revoked');
    expect(forced.code).toBe(0);
    expect(forced.out).toContain(
      `kept disabled here (enabled in the file): integrator beta, key ${betaKey.slice(0, 12)}`,
    );
    expect((await here.store.lookupHash(hashApiKey(leaked)))?.key.disabled).toBe(false);
    expect((await here.store.lookupHash(hashApiKey(betaKey)))?.key.disabled).toBe(true);
    expect((await here.store.getIntegrator('beta'))?.disabled).toBe(true);
  });

  it('error: a backup naming one hash both live and revoked, or a revoked entry that is not a hash, is refused whole', async () => {
    const server = await privateRedis();
    servers.push(server);
    const target = await connect(server);
    const key = keyOf((await cli(target, 'create', '--integrator', 'acme')).out);
    const doc = JSON.parse((await cli(target, 'export')).out);
    const file = path.join(tempDir(), 'bad.json');
    writeFileSync(file, JSON.stringify({ ...doc, revokedApiKeys: [hashApiKey(key), 'nope'] }));
    const out = await cli(target, 'import', '--file', file);
    expect(out.code).toBe(2);
    expect(out.out).toContain('revokedApiKeys[0]: the hash is also a live key in apiKeys');
    expect(out.out).toContain('revokedApiKeys[1]: needs a SHA-256 hash');
    expect(await target.store.isRevoked(hashApiKey(key))).toBe(false);
  });

  it('error: import refuses a document with a record that is not a key record, and writes nothing', async () => {
    const server = await privateRedis();
    servers.push(server);
    const target = await connect(server);
    const file = path.join(tempDir(), 'bad.json');
    writeFileSync(
      file,
      JSON.stringify({
        format: 'pmm-integrators',
        version: 1,
        integrators: [{ id: 'x' }],
        apiKeys: [{ hash: 'nothex' }],
      }),
    );
    const res = await cli(target, 'import', '--file', file);
    expect(res.code).toBe(2);
    expect(res.out).toMatch(/apiKeys\[0\]: .*needs a SHA-256 "hash"/);
    expect(await target.redis.dbsize()).toBe(0);
  });

  it('behavior: the gateway seeds the development key again when it disappears from Redis', async () => {
    const server = await privateRedis();
    servers.push(server);
    const { redis, store } = await connect(server);
    const devKey = 'pmm_dev_test-key-0123456789';
    let reseeds = 0;
    const keeper = keepDevKeySeeded(store, devKey, [USER], {
      intervalMs: 50,
      onReseed: () => reseeds++,
      onError: () => undefined,
    });
    try {
      expect(await keeper.ready).toBe('seeded');
      expect((await store.lookupHash(hashApiKey(devKey)))?.integrator.id).toBe(DEV_INTEGRATOR_ID);
      await redis.flushall();
      // The key is readable before the keeper reports the reseed (it still announces the
      // change after writing): wait for both.
      await waitFor(async () => {
        if (!(await store.lookupHash(hashApiKey(devKey))) || reseeds === 0) throw new Error('not yet');
      });
      expect(reseeds).toBe(1);
      expect((await store.getIntegrator(DEV_INTEGRATOR_ID))?.whitelist).toEqual([USER]);
    } finally {
      keeper.stop();
    }
  });

  it('behavior: a check that runs while the start is still seeding does not seed the key again', async () => {
    const server = await privateRedis();
    servers.push(server);
    const { store } = await connect(server);
    // The start's seed writes the integrator, then the key; a slow Redis stretches the gap
    // between them past several check intervals.
    const slowStore = Object.create(store) as typeof store;
    slowStore.putIntegrator = async (...args) => {
      await new Promise((resolve) => setTimeout(resolve, 200));
      return store.putIntegrator(...args);
    };
    let reseeds = 0;
    const keeper = keepDevKeySeeded(slowStore, 'pmm_dev_slow-start-0123456789', [USER], {
      intervalMs: 10,
      onReseed: () => reseeds++,
      onError: (err) => {
        throw err;
      },
    });
    try {
      expect(await keeper.ready).toBe('seeded');
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(reseeds).toBe(0);
    } finally {
      keeper.stop();
    }
  });

  it('behavior: a revoked or disabled development key stays so across gateway restarts', async () => {
    const server = await privateRedis();
    servers.push(server);
    const target = await connect(server);
    const devKey = 'pmm_dev_operator-decides-0123456789';
    const hash = hashApiKey(devKey);
    /** What a gateway start does with DEV_API_KEY; returns the outcome after a few checks. */
    const start = async () => {
      let reseeds = 0;
      const keeper = keepDevKeySeeded(target.store, devKey, [USER], {
        intervalMs: 20,
        onReseed: () => reseeds++,
        onError: () => undefined,
      });
      const outcome = await keeper.ready;
      await new Promise((r) => setTimeout(r, 150));
      keeper.stop();
      return { outcome, reseeds };
    };
    expect((await start()).outcome).toBe('seeded');
    const keyId = (await target.store.lookupHash(hash))!.key.keyId;

    expect((await cli(target, 'disable', '--key', keyId)).code).toBe(0);
    expect((await start()).outcome).toBe('seeded');
    expect((await target.store.lookupHash(hash))?.key.disabled).toBe(true);
    expect((await cli(target, 'enable', '--key', keyId)).code).toBe(0);

    expect((await cli(target, 'update', '--integrator', DEV_INTEGRATOR_ID, '--disable')).code).toBe(0);
    await start();
    expect((await target.store.lookupHash(hash))?.integrator.disabled).toBe(true);
    expect((await cli(target, 'update', '--integrator', DEV_INTEGRATOR_ID, '--enable')).code).toBe(0);

    expect((await cli(target, 'revoke', '--key', keyId)).code).toBe(0);
    expect(await start()).toEqual({ outcome: 'revoked', reseeds: 0 });
    expect(await target.store.lookupHash(hash)).toBeUndefined();

    // Data loss is not a decision: an empty Redis gets the key again, as on a first start.
    await target.redis.flushall();
    expect((await start()).outcome).toBe('seeded');
    expect(await target.store.lookupHash(hash)).toBeDefined();
  });
});
