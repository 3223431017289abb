/**
 * The signer as a process (its build, as production runs it: testkit's spawnService) with
 * signing keys in a real SoftHSM2 token: the key loads from SIGNER_PKCS11_<id> and its PIN
 * file, quotes are signed by the token's key; start-up stops with a clear message on a missing
 * token or key, a wrong PIN, a key that is not secp256k1, and the same key on two chains
 * (naming both), never printing the PIN; a token that fails mid-run answers 503 in the
 * envelope, counts the failure in /metrics, and the signer signs again once the token is back;
 * a module that stops answering on one chain's token holds no more than that key's threads (a
 * shim over SoftHSM2 built with gcc: testkit's buildHangingModule), the other chain signs on.
 */
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createRedis, redisKeys, redisReady, type RedisClient } from '@pmm/core';
import {
  buildHangingModule,
  spawnService,
  startSoftHsm,
  testKey,
  until,
  type HangingModule,
  type SoftHsm,
} from '@pmm/testkit';
import { recoverAddress, type Hex } from 'viem';
import { privateKeyToAddress } from 'viem/accounts';
import { swapDigest } from '@pmm/protocol';
import { INTERNAL_TOKEN, REDIS_URL, USER, integrator, testRegistry } from '../support/fixture';

jest.setTimeout(120_000);

const PIN = '31415926';
const OTHER_PIN = '27182818';
const IMPORTED = testKey('pkcs11-process-imported');

let hsm: SoftHsm;
let TOKEN: string;
let DRILL: string;
let STUCK: string;
let secrets: string;
let shim: HangingModule;
let redis: RedisClient;
const prefix = `pmm-test-${randomBytes(6).toString('hex')}`;
const keys = redisKeys(prefix);

interface Proc {
  child: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
}

function startMain(env: Record<string, string>): Proc {
  const { child, output } = spawnService('signer', { env: { ...hsm.env, ...env } });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, output, exited };
}

async function waitForLine(p: Proc, re: RegExp, timeoutMs = 30_000): Promise<RegExpExecArray> {
  const start = Date.now();
  for (;;) {
    const m = re.exec(p.output());
    if (m) return m;
    if (Date.now() - start > timeoutMs || p.child.exitCode !== null)
      throw new Error(`no line ${re} in output:\n${p.output()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

function pinFile(name: string, pin: string): string {
  const file = path.join(secrets, name);
  writeFileSync(file, `${pin}\n`, { mode: 0o600 });
  return file;
}

/** Serves chain 8453 only, its key in the token; `extra` adds or overrides settings. */
const env = (label: string, extra: Record<string, string> = {}): Record<string, string> => ({
  REDIS_URL,
  // The shared test Redis keeps nothing on disk; the drills test durability (drill-*.test.ts).
  REDIS_DURABILITY: 'none',
  REDIS_KEY_PREFIX: prefix,
  INTERNAL_TOKEN,
  PORT: '0',
  SERVED_CHAINS: '8453',
  SIGNER_PKCS11_8453: hsm.uri(TOKEN, label),
  SIGNER_PKCS11_PIN_8453_FILE: pinFile('pin-8453', PIN),
  ...extra,
});

async function exitMessage(e: Record<string, string>): Promise<string> {
  const p = startMain(e);
  expect(await p.exited).toBe(1);
  const out = p.output();
  expect(out).not.toContain(PIN);
  expect(out).not.toContain(OTHER_PIN);
  return out;
}

const body = (chainId = 8453) => {
  const registry = testRegistry(chainId);
  return {
    ...(chainId === 8453 ? {} : { chainId }),
    tokenIn: registry.baseTokens[0]!.address,
    tokenOut: registry.quoteToken.address,
    fee: '30',
    userAddress: USER,
  };
};

async function sign(
  port: number,
  chainId = 8453,
): Promise<{ status: number; headers: Headers; json: Record<string, unknown> }> {
  const res = await fetch(`http://127.0.0.1:${port}/v2/swap/sign`, {
    method: 'POST',
    headers: {
      'Content-Type': 'application/json',
      'X-Internal-Token': INTERNAL_TOKEN,
      'X-Integrator-Id': 'acme',
      'X-Request-Id': `req-${randomBytes(4).toString('hex')}`,
    },
    body: JSON.stringify(body(chainId)),
  });
  return { status: res.status, headers: res.headers, json: (await res.json()) as Record<string, unknown> };
}

/** The signer of a 200's verificationData: abi.encode(fee, originRate, user, bytes sig), the signature last. */
async function signerOf(json: Record<string, unknown>): Promise<string> {
  const vd = json.verificationData as string;
  const signature = `0x${vd.slice(2 + 64 * 5, 2 + 64 * 5 + 130)}` as Hex;
  const b = body();
  const digest = swapDigest({
    tokenIn: b.tokenIn,
    tokenOut: b.tokenOut,
    timestamp: BigInt(json.timestamp as number),
    fee: 30n,
    originRate: 0n,
    userAddress: b.userAddress,
  });
  return recoverAddress({ hash: `0x${Buffer.from(digest).toString('hex')}`, signature });
}

const metricsText = async (port: number) => (await fetch(`http://127.0.0.1:${port}/metrics`)).text();

beforeAll(async () => {
  hsm = startSoftHsm();
  TOKEN = hsm.initToken('signer', PIN);
  hsm.generateKey(TOKEN, PIN, 'k8453');
  hsm.generateKey(TOKEN, PIN, 'k56');
  hsm.importKey(TOKEN, PIN, 'imported', IMPORTED);
  hsm.generateKey(TOKEN, PIN, 'p256', { curve: 'prime256v1' });
  DRILL = hsm.initToken('drill', PIN);
  hsm.generateKey(DRILL, PIN, 'k');
  STUCK = hsm.initToken('stuck', PIN);
  hsm.generateKey(STUCK, PIN, 'k');
  shim = buildHangingModule(hsm.modulePath);
  secrets = mkdtempSync(path.join(tmpdir(), 'pmm-pins-'));
  redis = createRedis(REDIS_URL, { role: 'command', name: 'pkcs11-test' });
  await redisReady(redis);
  await redis.set(keys.pairs(8453), JSON.stringify(testRegistry(8453)));
  await redis.set(keys.pairs(56), JSON.stringify(testRegistry(56)));
  await redis.set(keys.integrator('acme'), JSON.stringify(integrator('acme')));
});

afterAll(async () => {
  const found = await redis.keys(`${prefix}:*`);
  if (found.length > 0) await redis.del(...found);
  await redis.quit();
  rmSync(secrets, { recursive: true, force: true });
  shim?.remove();
  hsm?.remove();
});

describe('signer process with keys in a PKCS#11 token', () => {
  it('behavior: the key loads from SIGNER_PKCS11_<id> and its PIN file; quotes are signed by the key in the token', async () => {
    const p = startMain(env('imported'));
    try {
      const port = Number((await waitForLine(p, /"message":"signer listening".*?"port":(\d+)/))[1]);
      const address = privateKeyToAddress(IMPORTED);
      expect(p.output()).toMatch(new RegExp(`"address":"${address}","backend":"pkcs11"`));
      const res = await sign(port);
      expect(res.status).toBe(200);
      expect(await signerOf(res.json)).toBe(address);
      // Concurrent requests: all answered, each by the token's key.
      const many = await Promise.all(Array.from({ length: 12 }, () => sign(port)));
      for (const r of many) {
        expect(r.status).toBe(200);
        expect(await signerOf(r.json)).toBe(address);
      }
      expect(p.output()).not.toContain(PIN);
    } finally {
      p.child.kill('SIGKILL');
    }
  });

  describe('start-up stops with a clear message, never the PIN', () => {
    it('error: no token with that label', async () => {
      const out = await exitMessage(env('k8453', { SIGNER_PKCS11_8453: hsm.uri('absent-token', 'k8453') }));
      expect(out).toMatch(
        /SIGNER_PKCS11_8453: chain 8453: key \(label "k8453"\) in token "absent-token" .*: no token labelled "absent-token"/,
      );
    });

    it('error: no key with that label in the token', async () => {
      const out = await exitMessage(env('absent-key'));
      expect(out).toMatch(
        /SIGNER_PKCS11_8453: chain 8453: key \(label "absent-key"\).*: no private key with that label\/id in the token/,
      );
    });

    it('error: a wrong PIN', async () => {
      const out = await exitMessage(env('k8453', { SIGNER_PKCS11_PIN_8453_FILE: pinFile('wrong', OTHER_PIN) }));
      expect(out).toMatch(/SIGNER_PKCS11_8453: chain 8453: .*: the token refused the PIN \(CKR_PIN_INCORRECT\)/);
    });

    it('error: a key that is not secp256k1', async () => {
      const out = await exitMessage(env('p256'));
      expect(out).toMatch(/SIGNER_PKCS11_8453: chain 8453: .*the key is not a secp256k1 key \(its curve: P-256\)/);
    });

    it('error: a PKCS#11 URI without the module path, and a PIN in the URI, are configuration errors', async () => {
      expect(await exitMessage(env('k8453', { SIGNER_PKCS11_8453: `pkcs11:token=${TOKEN};object=k8453` }))).toMatch(
        /SIGNER_PKCS11_8453 \(signerPkcs11_8453\): module-path: required/,
      );
      expect(
        await exitMessage(env('k8453', { SIGNER_PKCS11_8453: `${hsm.uri(TOKEN, 'k8453')}&pin-value=${OTHER_PIN}` })),
      ).toMatch(/unknown attribute|pin-value: the PIN does not go in the URI/);
    });

    it('error: the same key on two chains stops the start, naming both (token key and the same key in memory)', async () => {
      const both = env('imported', { SERVED_CHAINS: '8453,56', SIGNER_KEY_56: IMPORTED });
      const out = await exitMessage(both);
      expect(out).toContain(`chains 8453 and 56 have the same signing key (${privateKeyToAddress(IMPORTED)})`);
      expect(out).not.toContain(IMPORTED.slice(2));
      const twice = env('k8453', {
        SERVED_CHAINS: '8453,56',
        SIGNER_PKCS11_56: hsm.uri(TOKEN, 'k8453'),
        SIGNER_PKCS11_PIN_56_FILE: pinFile('pin-56', PIN),
      });
      expect(await exitMessage(twice)).toMatch(/chains 8453 and 56 have the same signing key \(0x[0-9a-fA-F]{40}\)/);
    });

    it('behavior: two chains with their own keys in one token start', async () => {
      const p = startMain(
        env('k8453', {
          SERVED_CHAINS: '8453,56',
          SIGNER_PKCS11_56: hsm.uri(TOKEN, 'k56'),
          SIGNER_PKCS11_PIN_56_FILE: pinFile('pin-56', PIN),
        }),
      );
      try {
        await waitForLine(p, /"message":"signer listening"/);
        expect(p.output().match(/"backend":"pkcs11"/g)).toHaveLength(2);
      } finally {
        p.child.kill('SIGKILL');
      }
    });
  });

  it('behavior: a token failing mid-run answers 503 in the envelope and counts it; signing resumes when the token is back', async () => {
    const p = startMain(env('k', { SIGNER_PKCS11_8453: hsm.uri(DRILL, 'k') }));
    const dir = hsm.tokenDir(DRILL);
    const away = path.join(path.dirname(path.dirname(dir)), `away-${path.basename(dir)}`);
    try {
      const port = Number((await waitForLine(p, /"message":"signer listening".*?"port":(\d+)/))[1]);
      const ok = await sign(port);
      expect(ok.status).toBe(200);
      const address = await signerOf(ok.json);
      expect(await metricsText(port)).toMatch(/signer_key_failures_total\{chain="8453",service="signer"\} 0/);

      renameSync(dir, away);
      const down = await sign(port);
      expect(down.status).toBe(503);
      expect(down.headers.get('retry-after')).toBe('1');
      expect(down.json).toEqual({
        error: {
          code: 'SERVICE_UNAVAILABLE',
          message: 'the signing key is unavailable for now; retry shortly',
          requestId: expect.any(String),
        },
      });
      const metrics = await metricsText(port);
      expect(metrics).toMatch(/signer_key_failures_total\{chain="8453",service="signer"\} [1-9]/);
      expect(metrics).toMatch(/signer_key_up\{chain="8453",service="signer"\} 0/);
      // Still down a moment later: 503 again (never a hang, never a 500).
      expect((await sign(port)).status).toBe(503);

      renameSync(away, dir);
      const back = await until(
        async () => {
          const r = await sign(port);
          return r.status === 200 ? r : undefined;
        },
        60_000,
        'a 200 after the token came back',
        200,
      );
      expect(await signerOf(back.json)).toBe(address);
      expect(await metricsText(port)).toMatch(/signer_key_up\{chain="8453",service="signer"\} 1/);
      expect(p.output()).toMatch(/"message":"signing key unavailable; signs answer 503 until its module recovers"/);
      expect(p.output()).toMatch(/"message":"signing key available again"/);
      expect(p.output()).not.toContain(PIN);
    } finally {
      try {
        renameSync(away, dir);
      } catch {
        // already back
      }
      p.child.kill('SIGKILL');
    }
  });

  it("behavior: a module that stops answering one chain's signs: each times out (503, key down) and holds only that key's threads; the other chain signs on", async () => {
    const inShim = (token: string, label: string) => hsm.uri(token, label).replace(hsm.modulePath, shim.modulePath);
    const p = startMain(
      env('k', {
        SERVED_CHAINS: '8453,56',
        SIGNER_PKCS11_8453: inShim(STUCK, 'k'),
        SIGNER_PKCS11_56: inShim(TOKEN, 'k56'),
        SIGNER_PKCS11_PIN_56_FILE: pinFile('pin-56', PIN),
        PKCS11_SESSIONS: '4',
        PKCS11_SIGN_TIMEOUT_MS: '500',
      }),
    );
    try {
      const port = Number((await waitForLine(p, /"message":"signer listening".*?"port":(\d+)/))[1]);
      expect((await sign(port)).status).toBe(200);
      expect(p.output()).toMatch(/"message":"thread pool sized for the PKCS#11 sessions".*"threads":12/);
      shim.hang(STUCK);
      // As many stuck signs as the key has sessions, and as libuv has threads by default.
      const stuck = await Promise.all(Array.from({ length: 4 }, () => sign(port)));
      expect(stuck.map((r) => r.status)).toEqual([503, 503, 503, 503]);
      expect(await metricsText(port)).toMatch(/signer_key_up\{chain="8453",service="signer"\} 0/);
      expect(p.output()).toMatch(/"reason":"the module did not answer a sign within 500 ms"/);
      // Chain 56's key, in the same module, needs a thread of the pool: there is one.
      const other = await sign(port, 56);
      expect(other.status).toBe(200);
      expect((await sign(port)).status).toBe(503);
    } finally {
      shim.release();
      p.child.kill('SIGKILL');
    }
  });
});
