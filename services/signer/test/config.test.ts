/**
 * Start-up configuration: declared settings and defaults, per-chain key sources (hex, file,
 * encrypted keystore), and failures that name the setting or chain without any secret.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { encryptKeystoreJson } from 'ethers';
import { privateKeyToAddress } from 'viem/accounts';
import { ConfigError, SIGN_PATH_SETTINGS } from '@pmm/core';
import { loadSignerConfig, loadSigningKeys, missingKeyMessage, SIGNER_SETTINGS } from '../src';
import { INTERNAL_TOKEN, testKey } from './support/fixture';

const KEYS = { 8453: testKey('cfg-8453'), 56: testKey('cfg-56'), 4663: testKey('cfg-4663') };
const baseEnv = (): NodeJS.ProcessEnv => ({
  INTERNAL_TOKEN,
  SIGNER_KEY_8453: KEYS[8453],
  SIGNER_KEY_56: KEYS[56],
  SIGNER_KEY_4663: KEYS[4663],
});
const load = (env: NodeJS.ProcessEnv) => loadSignerConfig({ env, file: {} });

let tmp: string;
beforeAll(() => {
  tmp = mkdtempSync(path.join(os.tmpdir(), 'pmm-signer-cfg-'));
});
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** Runs `fn`, expects a ConfigError, and checks no secret appears in its message. */
function configError(fn: () => unknown): string {
  let caught: unknown;
  try {
    fn();
  } catch (err) {
    caught = err;
  }
  expect(caught).toBeInstanceOf(ConfigError);
  const message = (caught as Error).message;
  for (const secret of [INTERNAL_TOKEN, ...Object.values(KEYS), ...Object.values(KEYS).map((k) => k.slice(2))]) {
    expect(message).not.toContain(secret);
  }
  return message;
}

async function configErrorAsync(p: Promise<unknown>): Promise<string> {
  const err: unknown = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ConfigError);
  for (const secret of Object.values(KEYS)) expect((err as Error).message).not.toContain(secret.slice(2));
  return (err as Error).message;
}

describe('settings', () => {
  it('default: port 8081, host 127.0.0.1, prefix pmm, all three chains, MAX_FEE 10000, originRate 0', () => {
    const c = load(baseEnv());
    expect(c).toMatchObject({
      port: 8081,
      host: '127.0.0.1',
      redisUrl: 'redis://127.0.0.1:6379',
      redisKeyPrefix: 'pmm',
      logLevel: 'info',
      servedChains: [8453, 56, 4663],
      maxFee: 10_000n,
      signerBackend: 'auto',
    });
    expect(c.chains[56]).toEqual({
      chainId: 56,
      originRate: 0n,
      quoteValiditySeconds: 60,
      key: { kind: 'hex', env: 'SIGNER_KEY_56', privateKey: KEYS[56] },
    });
  });

  it('behavior: SERVED_CHAINS limits the chains (and the keys required); ORIGIN_RATE_<id> is a uint256', () => {
    const max = ((1n << 256n) - 1n).toString();
    const c = load({
      INTERNAL_TOKEN,
      SERVED_CHAINS: '56',
      SIGNER_KEY_56: KEYS[56],
      ORIGIN_RATE_56: max,
      MAX_FEE: '500',
    });
    expect(c.servedChains).toEqual([56]);
    expect(c.chains[56]?.originRate).toBe(BigInt(max));
    expect(c.maxFee).toBe(500n);
    expect(Object.keys(c.chains)).toEqual(['56']);
  });

  const ROUTER = '0x5FbDB2315678afecb367f032d93F642f64180aa3';
  it('behavior: QUOTE_VALIDITY_SECONDS_<id> per chain (1 s to a day); CHAINS is optional and keeps only deployments', () => {
    const c = load({ ...baseEnv(), QUOTE_VALIDITY_SECONDS_56: '120' });
    expect(c.chains[56]?.quoteValiditySeconds).toBe(120);
    expect(c.chains[8453]?.quoteValiditySeconds).toBe(60);
    expect(c.deployments).toEqual({});
    expect(configError(() => load({ ...baseEnv(), QUOTE_VALIDITY_SECONDS_56: '0' }))).toMatch(
      /^QUOTE_VALIDITY_SECONDS_56 \(quoteValiditySeconds_56\): /,
    );
    const withChains = load({
      ...baseEnv(),
      CHAINS: JSON.stringify({
        56: {
          chainId: 56,
          rpcUrl: 'http://127.0.0.1:8546',
          contracts: { router: ROUTER, helper: ROUTER, verifier: ROUTER },
        },
      }),
    });
    expect(withChains.deployments[56]?.rpcUrl).toBe('http://127.0.0.1:8546');
  });

  it('error: invalid settings name the setting', () => {
    expect(configError(() => load({ ...baseEnv(), SERVED_CHAINS: '8453,1' }))).toBe(
      'SERVED_CHAINS (servedChains): chain 1 is not in the chain registry, got "8453,1"',
    );
    expect(configError(() => load({ ...baseEnv(), SERVED_CHAINS: '56,56' }))).toBe(
      'SERVED_CHAINS (servedChains): lists a chain twice, got "56,56"',
    );
    expect(configError(() => load({ ...baseEnv(), ORIGIN_RATE_56: '-5' }))).toBe(
      'ORIGIN_RATE_56 (originRate_56): must be a base-10 unsigned integer, got "-5"',
    );
    expect(configError(() => load({ ...baseEnv(), ORIGIN_RATE_56: (1n << 256n).toString() }))).toMatch(
      /^ORIGIN_RATE_56 \(originRate_56\): must be at most 2\^256-1/,
    );
    expect(configError(() => load({ ...baseEnv(), PORT: '70000' }))).toBe(
      'PORT (port): must be an integer in 0..65535, got "70000"',
    );
  });

  it('error: INTERNAL_TOKEN follows the one rule the gateway follows: at least 16 characters', () => {
    expect(configError(() => load({ ...baseEnv(), INTERNAL_TOKEN: 'x' }))).toBe(
      'INTERNAL_TOKEN (internalToken): must be at least 16 characters',
    );
    expect(configError(() => load({ ...baseEnv(), INTERNAL_TOKEN: 'fifteen-chars-x' }))).toMatch(/at least 16/);
    expect(load({ ...baseEnv(), INTERNAL_TOKEN: 'sixteen-chars-xx' }).internalToken).toBe('sixteen-chars-xx');
    // One definition, core's, which the gateway spreads too (gateway/test/config.test.ts).
    expect(SIGNER_SETTINGS.internalToken).toBe(SIGN_PATH_SETTINGS.internalToken);
  });

  it('error: INTERNAL_TOKEN is required', () => {
    const env = baseEnv();
    delete env.INTERNAL_TOKEN;
    expect(configError(() => load(env))).toMatch(/^INTERNAL_TOKEN \(internalToken\): required: /);
  });

  it('error: a served chain without a key fails with a message naming the chain and no secret', () => {
    const env = baseEnv();
    delete env.SIGNER_KEY_56;
    const message = configError(() => load(env));
    expect(message).toBe(missingKeyMessage(56));
    expect(message).toBe(
      'chain 56 is served (SERVED_CHAINS) but has no signing key: set SIGNER_KEY_56 (or SIGNER_KEY_56_FILE), or SIGNER_KEYSTORE_56 with SIGNER_KEYSTORE_PASSWORD_56_FILE, ' +
        'or SIGNER_PKCS11_56 with SIGNER_PKCS11_PIN_56_FILE',
    );
  });
});

describe('signing keys', () => {
  it('behavior: hex keys give one signer per chain with the key address', async () => {
    const signers = await loadSigningKeys(load(baseEnv()));
    expect([...signers.keys()]).toEqual([8453, 56, 4663]);
    for (const id of [8453, 56, 4663] as const) expect(signers.get(id)?.address).toBe(privateKeyToAddress(KEYS[id]));
  });

  it('error: one signing key on two chains is refused, naming both chains and the address, never the key', async () => {
    const shared = { ...baseEnv(), SIGNER_KEY_56: KEYS[8453] };
    const message = await configErrorAsync(loadSigningKeys(load(shared)));
    expect(message).toBe(
      `chains 8453 and 56 have the same signing key (${privateKeyToAddress(KEYS[8453])}): ` +
        'a quote signed for one would be valid on the other (the signed digest carries no chain id); give each chain its own key',
    );
    // The same key in another spelling (no 0x, upper case) is the same key.
    const respelled = { ...baseEnv(), SIGNER_KEY_4663: KEYS[56].slice(2).toUpperCase() };
    expect(await configErrorAsync(loadSigningKeys(load(respelled)))).toMatch(/^chains 56 and 4663 have the same/);
  });

  it('behavior: SIGNER_KEY_<id>_FILE reads the key from a file', async () => {
    const file = path.join(tmp, 'key-56');
    writeFileSync(file, `${KEYS[56]}\n`);
    const env = { ...baseEnv(), SIGNER_KEY_56: undefined, SIGNER_KEY_56_FILE: file };
    const signers = await loadSigningKeys(load(env));
    expect(signers.get(56)?.address).toBe(privateKeyToAddress(KEYS[56]));
  });

  it('behavior: an encrypted keystore with a password file decrypts to the right address', async () => {
    const keystore = path.join(tmp, 'keystore-4663.json');
    const password = 'correct horse battery staple';
    const json = await encryptKeystoreJson(
      { address: privateKeyToAddress(KEYS[4663]), privateKey: KEYS[4663] },
      password,
      {
        scrypt: { N: 1 << 10, r: 8, p: 1 },
      },
    );
    writeFileSync(keystore, json);
    writeFileSync(path.join(tmp, 'pw'), `${password}\n`);
    const env = {
      ...baseEnv(),
      SIGNER_KEY_4663: undefined,
      SIGNER_KEYSTORE_4663: keystore,
      SIGNER_KEYSTORE_PASSWORD_4663_FILE: path.join(tmp, 'pw'),
    };
    const config = load(env);
    expect(config.chains[4663]?.key.kind).toBe('keystore');
    const signers = await loadSigningKeys(config);
    expect(signers.get(4663)?.address).toBe(privateKeyToAddress(KEYS[4663]));

    writeFileSync(path.join(tmp, 'pw-wrong'), 'hunter2-not-it');
    const wrong = { ...env, SIGNER_KEYSTORE_PASSWORD_4663_FILE: path.join(tmp, 'pw-wrong') };
    const message = await configErrorAsync(loadSigningKeys(load(wrong)));
    expect(message).toBe(
      'SIGNER_KEYSTORE_4663: chain 4663: cannot decrypt the keystore (wrong password or not a JSON keystore)',
    );
    expect(message).not.toContain('hunter2');

    const noPassword = { ...env, SIGNER_KEYSTORE_PASSWORD_4663_FILE: undefined };
    expect(configError(() => load(noPassword))).toBe(
      'SIGNER_KEYSTORE_4663: chain 4663 keystore needs a password: set SIGNER_KEYSTORE_PASSWORD_4663_FILE (or SIGNER_KEYSTORE_PASSWORD_4663)',
    );
    const missing = { ...env, SIGNER_KEYSTORE_4663: path.join(tmp, 'absent.json') };
    expect(await configErrorAsync(loadSigningKeys(load(missing)))).toBe(
      `SIGNER_KEYSTORE_4663: chain 4663: cannot read the keystore file ${path.join(tmp, 'absent.json')}`,
    );
  });

  it('error: a malformed or out-of-range key names the setting and chain, never the value', async () => {
    const short = KEYS[56].slice(0, 40);
    const m1 = await configErrorAsync(loadSigningKeys(load({ ...baseEnv(), SIGNER_KEY_56: short })));
    expect(m1).toBe('SIGNER_KEY_56: chain 56: private key: expected 32 bytes (64 hex digits)');
    expect(m1).not.toContain(short.slice(2));
    const zero = `0x${'0'.repeat(64)}`;
    expect(await configErrorAsync(loadSigningKeys(load({ ...baseEnv(), SIGNER_KEY_56: zero })))).toBe(
      'SIGNER_KEY_56: chain 56: private key: not a valid secp256k1 scalar',
    );
  });

  it('behavior: SIGNER_BACKEND=noble forces the pure-JS backend', async () => {
    const signers = await loadSigningKeys(load({ ...baseEnv(), SIGNER_BACKEND: 'noble' }));
    expect(signers.get(8453)?.backend).toBe('noble');
  });
});

describe('every missing secret at once', () => {
  it('error: without a readable CONFIG_FILE and any secret, the message names the file, the token and each chain key', () => {
    let caught: unknown;
    try {
      loadSignerConfig({ env: { CONFIG_FILE: '/nonexistent/chains.json', SERVED_CHAINS: '8453,56' } });
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(ConfigError);
    expect((caught as ConfigError).problems).toEqual([
      'CONFIG_FILE: cannot read /nonexistent/chains.json',
      expect.stringMatching(/^INTERNAL_TOKEN \(internalToken\): required/),
      missingKeyMessage(8453),
      missingKeyMessage(56),
    ]);
  });
});
