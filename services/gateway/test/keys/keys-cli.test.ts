import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import request from 'supertest';
import { createRedis, redisReady } from '@pmm/core';
import { DEV_INTEGRATOR_ID, hashApiKey, seedDevKey, type Gateway } from '@pmm/gateway';
import { runKeysCommand } from '../../src/keys/keys-command';
import { REDIS_URL, call, harness, type Harness } from '../support/harness';

const run = promisify(execFile);
const ROOT = path.resolve(__dirname, '..', '..', '..', '..');

let h: Harness;
let gw: Gateway;

beforeAll(async () => {
  h = await harness();
  gw = await h.gateway();
  await h.putBook(8453);
});
afterAll(() => h.cleanup());

async function cli(...argv: string[]): Promise<{ code: number; out: string }> {
  const lines: string[] = [];
  const code = await runKeysCommand(argv, h.store, (l) => lines.push(l));
  return { code, out: lines.join('\n') };
}

const keyOf = (out: string) => /^API key: (pmm_[A-Za-z0-9_-]{43})$/m.exec(out)?.[1];
const keyIdOf = (out: string) => /^keyId: (\S+)$/m.exec(out)?.[1];
const price = (key: string) => call(request(gw.app).get('/v2/price').set('X-API-KEY', key));

/** Every key and value under the test prefix, as one string. */
async function redisDump(): Promise<string> {
  const keys = await h.redis.keys(`${h.prefix}:*`);
  const parts: string[] = [];
  for (const k of keys) {
    const type = await h.redis.type(k);
    const value =
      type === 'set' ? (await h.redis.smembers(k)).join(',') : type === 'string' ? await h.redis.get(k) : type;
    parts.push(`${k}=${value}`);
  }
  return parts.join('\n');
}

async function until401(key: string): Promise<void> {
  const started = Date.now();
  while ((await price(key)).status !== 401) {
    if (Date.now() - started > 1_500) throw new Error('still accepted');
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('key CLI', () => {
  it('behavior: create prints a working key once; Redis holds only its hash', async () => {
    const { code, out } = await cli(
      'create',
      '--integrator',
      'acme',
      '--name',
      'Acme Ltd',
      '--whitelist',
      '0x70997970C51812dc3A010C7d01b50e0d17dc79C8',
      '--chains',
      '8453,56',
      '--rate',
      '50/10',
    );
    expect(code).toBe(0);
    const key = keyOf(out)!;
    expect(key).toBeDefined();
    expect(out).toContain('cannot be shown again');
    const res = await price(key);
    expect(res.status).toBe(200);
    expect(res.headers['ratelimit-limit']).toBe('50');
    const dump = await redisDump();
    expect(dump).not.toContain(key);
    expect(dump).not.toContain(key.slice(4)); // not even without the prefix
    expect(dump).toContain(hashApiKey(key));
    expect(await h.store.getIntegrator('acme')).toEqual({
      id: 'acme',
      name: 'Acme Ltd',
      whitelist: ['0x70997970c51812dc3a010c7d01b50e0d17dc79c8'],
      chains: [8453, 56],
      rateLimit: { requests: 50, windowSeconds: 10 },
      disabled: false,
    });
  });

  it('error: the command line is parsed strictly (node:util parseArgs): an unknown option, a stray argument or a dash-led value without `=` is exit 2 with the usage', async () => {
    const unknown = await cli('create', '--integrator', 'strict', '--colour', 'red');
    expect(unknown.code).toBe(2);
    expect(unknown.out).toContain("Unknown option '--colour'");
    expect(unknown.out).toContain('usage');
    const stray = await cli('list', 'extra');
    expect(stray.code).toBe(2);
    expect(stray.out).toContain('unexpected argument "extra"');
    const dash = await cli('update', '--integrator', 'strict', '--daily-quota', '-3');
    expect(dash.code).toBe(2);
    expect(dash.out).toContain('--daily-quota=-XYZ');
  });

  it('behavior: list shows keyId, integrator, whitelist, chains, rate, state, and never a key', async () => {
    const created = await cli(
      'create',
      '--integrator',
      'listed',
      '--whitelist',
      '0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC',
    );
    const key = keyOf(created.out)!;
    const { code, out } = await cli('list');
    expect(code).toBe(0);
    const line = out.split('\n').find((l) => l.startsWith(keyIdOf(created.out)!))!;
    expect(line).toContain('integrator=listed (listed)');
    expect(line).toContain('active');
    expect(line).toContain('chains=all');
    expect(line).toContain('rate=default');
    expect(line).toContain('whitelist=0x3c44cdddb6a900fa2b585dd299e03d12fa4293bc');
    expect(out).not.toContain(key);
    const json = await cli('list', '--json');
    const rows = JSON.parse(json.out) as { keyId: string; integrator: string }[];
    expect(rows.map((r) => r.integrator)).toEqual(expect.arrayContaining(['acme', 'listed']));
    expect(json.out).not.toContain(key);
  });

  it('behavior: update changes whitelist, chains, rate, name and originRate, effective within 1 s', async () => {
    const key = keyOf((await cli('create', '--integrator', 'upd', '--rate', '100/60')).out)!;
    expect((await call(request(gw.app).get('/v2/price?chainId=56').set('X-API-KEY', key))).status).not.toBe(400);
    const r = await cli(
      'update',
      '--integrator',
      'upd',
      '--name',
      'Updated',
      '--whitelist-add',
      '0x70997970C51812dc3A010C7d01b50e0d17dc79C8,0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC',
      '--chains',
      '8453',
      '--rate',
      '700/30',
      '--origin-rate',
      '8453=12345',
    );
    expect(r.code).toBe(0);
    await cli('update', '--integrator', 'upd', '--whitelist-remove', '0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC');
    expect(await h.store.getIntegrator('upd')).toEqual({
      id: 'upd',
      name: 'Updated',
      whitelist: ['0x70997970c51812dc3a010c7d01b50e0d17dc79c8'],
      chains: [8453],
      rateLimit: { requests: 700, windowSeconds: 30 },
      disabled: false,
      originRate: { '8453': '12345' },
    });
    const started = Date.now();
    let status = 0;
    while (status !== 400 && Date.now() - started < 1_500)
      status = (await call(request(gw.app).get('/v2/price?chainId=56').set('X-API-KEY', key))).status;
    expect(status).toBe(400); // chain 56 no longer enabled for this key
    expect((await price(key)).headers['ratelimit-limit']).toBe('700');
    await cli('update', '--integrator', 'upd', '--origin-rate', '8453=', '--chains', 'all', '--rate', 'default');
    expect(await h.store.getIntegrator('upd')).toMatchObject({
      chains: [],
      rateLimit: { requests: 0, windowSeconds: 0 },
    });
    expect((await h.store.getIntegrator('upd'))?.originRate).toBeUndefined();
  });

  it("behavior: --daily-quota sets the integrator's daily signature quota on create and update; default drops it", async () => {
    expect((await cli('create', '--integrator', 'quota', '--daily-quota', '5000')).code).toBe(0);
    expect((await h.store.getIntegrator('quota'))?.dailySignatureQuota).toBe(5000);
    expect((await cli('update', '--integrator', 'quota', '--daily-quota', '250000')).code).toBe(0);
    expect((await h.store.getIntegrator('quota'))?.dailySignatureQuota).toBe(250000);
    const listed = JSON.parse((await cli('list', '--json')).out) as {
      integrator: string;
      dailySignatureQuota: unknown;
    }[];
    expect(listed.find((r) => r.integrator === 'quota')?.dailySignatureQuota).toBe(250000);
    expect((await cli('update', '--integrator', 'quota', '--daily-quota', 'default')).code).toBe(0);
    expect(await h.store.getIntegrator('quota')).not.toHaveProperty('dailySignatureQuota');
    // A value that starts with a dash is given with `=` (node:util parseArgs, as every operator command).
    const bad = await cli('update', '--integrator', 'quota', '--daily-quota=-3');
    expect(bad.code).not.toBe(0);
    expect(bad.out).toContain('--daily-quota must be a positive integer or "default"');
  });

  it('behavior: disable/enable a key, disable an integrator, revoke a key', async () => {
    const out = (await cli('create', '--integrator', 'lifecycle')).out;
    const key = keyOf(out)!;
    const keyId = keyIdOf(out)!;
    expect((await price(key)).status).toBe(200);
    expect((await cli('disable', '--key', keyId)).code).toBe(0);
    await until401(key);
    expect((await cli('enable', '--key', keyId)).code).toBe(0);
    await new Promise((r) => setTimeout(r, 600));
    expect((await price(key)).status).toBe(200);
    expect((await cli('update', '--integrator', 'lifecycle', '--disable')).code).toBe(0);
    await until401(key);
    await cli('update', '--integrator', 'lifecycle', '--enable');
    expect((await cli('revoke', '--key', keyId)).code).toBe(0);
    await until401(key);
    expect((await cli('list')).out).not.toContain(keyId);
  });

  it('behavior: rotate issues a new key for the same integrator; --key revokes the old one', async () => {
    const out = (await cli('create', '--integrator', 'rot')).out;
    const oldKey = keyOf(out)!;
    const rotated = await cli('rotate', '--key', keyIdOf(out)!);
    expect(rotated.code).toBe(0);
    const newKey = keyOf(rotated.out)!;
    expect(newKey).not.toBe(oldKey);
    expect(rotated.out).toContain('integrator: rot');
    expect((await price(newKey)).status).toBe(200);
    await until401(oldKey);
    // --integrator keeps the old keys unless --revoke-old.
    const kept = keyOf((await cli('rotate', '--integrator', 'rot')).out)!;
    expect((await price(kept)).status).toBe(200);
    expect((await price(newKey)).status).toBe(200);
    const last = keyOf((await cli('rotate', '--integrator', 'rot', '--revoke-old')).out)!;
    await until401(kept);
    await until401(newKey);
    expect((await price(last)).status).toBe(200);
  });

  it.each([
    [['create'], 2, '--integrator is required'],
    [['create', '--integrator', 'Bad Id'], 2, 'integrator id must match'],
    [['create', '--integrator', 'acme'], 1, 'integrator "acme" exists'],
    [['create', '--integrator', 'x1', '--whitelist', '0x1234'], 2, 'not an address: "0x1234"'],
    [['create', '--integrator', 'x2', '--chains', '1'], 2, 'unknown chain "1"'],
    [['create', '--integrator', 'x3', '--rate', '10'], 2, '--rate must be'],
    [['revoke', '--key', 'pmm_nothing'], 1, 'no key "pmm_nothing"'],
    [['frobnicate'], 2, 'unknown command "frobnicate"'],
  ])('error: %j exits %i with a message', async (argv, code, message) => {
    const r = await cli(...argv);
    expect(r.code).toBe(code);
    expect(r.out).toContain(message);
  });

  /** The real entry point (cli/keys.ts) as the operator runs it, on this file's key prefix. */
  const keysBin = (args: string[], env: Record<string, string> = {}) =>
    run(
      process.execPath,
      [
        '-r',
        path.join(ROOT, 'scripts/lib/ts-register.cjs'),
        path.join(ROOT, 'services/gateway/src/cli/keys.ts'),
        ...args,
      ],
      { env: { ...process.env, REDIS_URL, REDIS_KEY_PREFIX: h.prefix, ...env } },
    );

  it('behavior: the real entry point (cli/keys.ts) creates a key that works', async () => {
    // The shared test Redis does not fsync each write (the next test shows the refusal).
    const { stdout } = await keysBin(['create', '--integrator', 'from-bin'], { REDIS_DURABILITY: 'none' });
    const key = keyOf(stdout)!;
    expect((await price(key)).status).toBe(200);
    const listed = await keysBin(['list']);
    expect(listed.stdout).toContain('integrator=from-bin');
    expect(listed.stdout).not.toContain(key);
  });

  it('error: the real entry point prints no key and exits 1 when Redis writes no append-only file', async () => {
    const shared = createRedis(REDIS_URL, { name: 'keys-cli-fsync' });
    try {
      await redisReady(shared);
      // The premise: this Redis writes no append-only file (true of the test Redis).
      expect(await shared.info('persistence')).toMatch(/^aof_enabled:0\r?$/m);
    } finally {
      shared.disconnect();
    }
    const result = await keysBin(['create', '--integrator', 'not-durable'], { REDIS_DURABILITY: 'fsync' }).then(
      (r) => ({ code: 0, ...r }),
      (err: { code: number; stdout: string; stderr: string }) => err,
    );
    expect(result.code).toBe(1);
    expect(result.stdout).not.toMatch(/pmm_/);
    expect(result.stderr).toMatch(/could not be confirmed durable .*no append-only file.*appendonly yes/);
  });

  it('behavior: the development key from config is seeded by its hash, idempotently, with its whitelist', async () => {
    const devKey = 'dev-key-for-tests-0123456789';
    await seedDevKey(h.store, devKey, ['0x70997970C51812dc3A010C7d01b50e0d17dc79C8']);
    await seedDevKey(h.store, devKey, ['0x70997970C51812dc3A010C7d01b50e0d17dc79C8']);
    expect((await price(devKey)).status).toBe(200);
    expect((await h.store.getIntegrator(DEV_INTEGRATOR_ID))?.whitelist).toEqual([
      '0x70997970c51812dc3a010c7d01b50e0d17dc79c8',
    ]);
    expect((await h.store.list()).filter((l) => l.key.integratorId === DEV_INTEGRATOR_ID)).toHaveLength(1);
    expect(await redisDump()).not.toContain(devKey);
  });
});
