/**
 * One validation of integrator and key records for every writer (create, update, import, the
 * development key), and readers that never hand a stored value to a header unchecked. Real
 * Redis (REDIS_URL), records read back through the real store.
 */
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import request from 'supertest';
import { hashApiKey } from '@pmm/gateway';
import { runKeysCommand } from '../../src/keys/keys-command';
import { harness, type Harness } from '../support/harness';

const USER = '0x00000000000000000000000000000000000000aa';
const HASH = (n: number) => n.toString(16).padStart(64, '0');
let h: Harness;
let dir: string;

beforeAll(async () => {
  h = await harness();
  dir = mkdtempSync(path.join(tmpdir(), 'key-records-'));
});
afterAll(async () => {
  await h.cleanup();
  rmSync(dir, { recursive: true, force: true });
});

async function cli(...argv: string[]): Promise<{ code: number; out: string }> {
  const lines: string[] = [];
  const code = await runKeysCommand(argv, h.store, (l) => lines.push(l), { redis: h.redis, prefix: h.prefix });
  return { code, out: lines.join('\n') };
}

const stored = async () => (await h.redis.keys(`${h.prefix}:*`)).sort();

function backup(integrators: unknown[], apiKeys: unknown[]): string {
  const file = path.join(dir, `backup-${Math.random().toString(36).slice(2)}.json`);
  writeFileSync(file, JSON.stringify({ format: 'pmm-integrators', version: 1, exportedAt: '', integrators, apiKeys }));
  return file;
}

const integrator = (id: string, over: Record<string, unknown> = {}) => ({
  id,
  name: id,
  whitelist: [USER],
  chains: [8453],
  rateLimit: { requests: 0, windowSeconds: 0 },
  disabled: false,
  ...over,
});
const key = (n: number, integratorId: string, keyId = `pmm_key${n}abcd`) => ({
  hash: HASH(n),
  integratorId,
  keyId,
  createdAt: 1,
  disabled: false,
});

describe('key records', () => {
  it('error: import refuses a file with bad records whole, naming each, and writes nothing', async () => {
    const before = await stored();
    const file = backup(
      [
        integrator('good'),
        integrator('bad-address', { whitelist: ['0x1234'] }),
        integrator('bad-chain', { chains: [1] }),
        integrator('bad-name', { name: 'evil\u001b[2J\u001b]0;owned\u0007' }),
        integrator('good'),
      ],
      [
        key(1, 'good', 'pmm_a\r\nX-Injected: 1'),
        key(2, 'nobody'),
        key(3, 'good', 'pmm_same0001'),
        key(4, 'good', 'pmm_same0001'),
        key(5, 'good'),
      ],
    );
    const res = await cli('import', '--file', file);
    expect(res.code).toBe(2);
    expect(res.out).toContain('nothing was imported');
    expect(res.out).toContain('integrators[1] (id "bad-address"): whitelist: not an address: "0x1234"');
    expect(res.out).toContain('integrators[2] (id "bad-chain"): chains: unknown chain "1"');
    expect(res.out).toContain('integrators[3] (id "bad-name"): name "evil\\u001b[2J');
    expect(res.out).toContain('integrators[4] (id "good"): the id appears twice');
    expect(res.out).toContain('apiKeys[0] (keyId "pmm_a\\r\\nX-Injected: 1"): keyId');
    expect(res.out).toContain('apiKeys[3] (keyId "pmm_same0001"): the keyId appears twice');
    // No control character of the file reaches the operator's terminal.
    expect([...res.out].filter((c) => c !== '\n' && c.charCodeAt(0) < 0x20)).toEqual([]);
    expect(await stored()).toEqual(before);

    // The integrator of a key must exist in the file or in Redis: checked before any write.
    const orphan = await cli('import', '--file', backup([integrator('good')], [key(2, 'nobody')]));
    expect(orphan.code).toBe(2);
    expect(orphan.out).toContain(
      'apiKeys[0] (keyId "pmm_key2abcd"): integrator "nobody" is neither in the backup nor stored',
    );
    expect(await stored()).toEqual(before);
  });

  it('behavior: a valid file imports; a key may point at an integrator already stored', async () => {
    expect((await cli('import', '--file', backup([integrator('held')], [key(10, 'held')]))).code).toBe(0);
    const res = await cli('import', '--file', backup([], [key(11, 'held')]));
    expect(res).toEqual({ code: 0, out: 'imported 0 integrators and 1 keys; 0 revoked keys held revoked' });
    expect((await h.store.lookupHash(HASH(11)))?.integrator.id).toBe('held');
    // A keyId already taken by another stored key is refused.
    const clash = await cli('import', '--file', backup([], [{ ...key(12, 'held'), keyId: 'pmm_key10abcd' }]));
    expect(clash.code).toBe(2);
    expect(clash.out).toContain('the keyId belongs to another stored key');
  });

  it('error: create and update apply the same rules (names with control characters, unknown chains)', async () => {
    const created = await cli('create', '--integrator', 'esc', '--name', 'x\u001b[31my');
    expect(created.code).toBe(2);
    expect(created.out).toContain('name "x\\u001b[31my" contains control characters');
    expect(await h.store.getIntegrator('esc')).toBeUndefined();
    expect((await cli('create', '--integrator', 'upd')).code).toBe(0);
    const updated = await cli('update', '--integrator', 'upd', '--chains', '8453,999');
    expect(updated.code).toBe(2);
    expect(updated.out).toContain('chains: unknown chain "999"');
    expect((await h.store.getIntegrator('upd'))?.chains).toEqual([]);
  });

  it('behavior: export --file over an existing world-readable file leaves it readable by its owner only', async () => {
    const file = path.join(dir, 'existing-export.json');
    writeFileSync(file, 'old', { mode: 0o644 });
    expect(statSync(file).mode & 0o777).toBe(0o644);
    const res = await cli('export', '--file', file);
    expect(res.code).toBe(0);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(JSON.parse(readFileSync(file, 'utf8')).format).toBe('pmm-integrators');
    const fresh = path.join(dir, 'fresh-export.json');
    await cli('export', '--file', fresh);
    expect(statSync(fresh).mode & 0o777).toBe(0o600);
  });

  it('error: a stored key whose keyId a header cannot carry authenticates nobody, and the gateway lives', async () => {
    await h.store.putIntegrator(integrator('raw', { chains: [] }) as never);
    const apiKey = 'pmm_raw-key-written-around-the-cli-0123456789';
    await h.redis.set(
      h.keys.apiKey(hashApiKey(apiKey)),
      JSON.stringify({ integratorId: 'raw', keyId: 'pmm_x\r\nX-Evil: 1', createdAt: 1, disabled: false }),
    );
    expect(await h.store.lookupHash(hashApiKey(apiKey))).toBeUndefined();
    const gw = await h.gateway();
    const res = await request(gw.app)
      .post('/v2/swap/sign')
      .set('X-API-KEY', apiKey)
      .send({ chainId: 8453, tokenIn: USER, tokenOut: USER, fee: '10', userAddress: USER, amountIn: '1' });
    expect(res.status).toBe(401);
    expect((await request(gw.app).get('/healthz')).status).toBe(200);
  });
});
