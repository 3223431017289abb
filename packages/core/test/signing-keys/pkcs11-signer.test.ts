/**
 * The PKCS#11 key backend against a real SoftHSM2 module (tokens in a private folder): the
 * address from the token's public key, signatures in the in-memory signer's form that recover
 * to it (a key imported into the token against the same key in memory), a key generated in the
 * token as non-extractable, the start-up refusals, concurrent signs on separate sessions, and a
 * key alone in its module that fails mid-run and comes back. Checked with viem, not with the code under test.
 */
import { execFileSync } from 'node:child_process';
import { renameSync } from 'node:fs';
import path from 'node:path';
import { recoverAddress, type Hex } from 'viem';
import { CURVE_ORDER, startSoftHsm, testKey, until, type SoftHsm } from '@pmm/testkit';
import { KeyUnavailableError, signSwapQuote } from '@pmm/protocol';
import { createDigestSigner } from '../../src/signing-keys/secp256k1-signer';
import { openPkcs11Signer, type Pkcs11Signer, type Pkcs11SignerOptions } from '../../src/signing-keys/pkcs11-signer';
import { parsePkcs11Uri } from '../../src/signing-keys/pkcs11-uri';

jest.setTimeout(60_000);

const PIN = '48151623';
const FRESH_PIN = '27182818';
const IMPORTED = testKey('pkcs11-imported');
let hsm: SoftHsm;
/** Token labels (each test run's own). */
let PMM: string, FRESH: string, DRILL: string;
const opened: Pkcs11Signer[] = [];

const hex = (b: Uint8Array): Hex => `0x${Buffer.from(b).toString('hex')}`;

async function open(token: string, label: string, opts: Partial<Pkcs11SignerOptions> = {}): Promise<Pkcs11Signer> {
  const signer = await openPkcs11Signer({ key: parsePkcs11Uri(hsm.uri(token, label)), pin: PIN, ...opts });
  opened.push(signer);
  return signer;
}

async function openError(token: string, label: string, pin = PIN): Promise<string> {
  try {
    const s = await openPkcs11Signer({ key: parsePkcs11Uri(hsm.uri(token, label)), pin });
    opened.push(s);
  } catch (err) {
    return (err as Error).message;
  }
  throw new Error('expected the key to be refused');
}

function digestOf(i: number): Uint8Array {
  const d = new Uint8Array(32);
  d.fill(i % 256);
  d[0] = (i * 37) % 256;
  return d;
}

beforeAll(() => {
  hsm = startSoftHsm();
  PMM = hsm.initToken('pmm', PIN);
  hsm.importKey(PMM, PIN, 'imported', IMPORTED);
  hsm.generateKey(PMM, PIN, 'generated');
  hsm.generateKey(PMM, PIN, 'p256', { curve: 'prime256v1' });
  FRESH = hsm.initToken('fresh', FRESH_PIN);
  hsm.generateKey(FRESH, FRESH_PIN, 'k');
  DRILL = hsm.initToken('drill', PIN);
  hsm.generateKey(DRILL, PIN, 'k');
});

afterAll(async () => {
  await Promise.all(opened.map((s) => s.close()));
  hsm?.remove();
});

describe('PKCS#11 key backend (SoftHSM2)', () => {
  it("behavior: the address comes from the token's public key: a key imported into the token has its in-memory address", async () => {
    const signer = await open(PMM, 'imported');
    expect(signer.backend).toBe('pkcs11');
    expect(signer.address).toBe(createDigestSigner(IMPORTED).address);
  });

  it('behavior: signatures have the in-memory form (65 bytes, low-s, v 27/28) and recover to the address, digests ≥ n included', async () => {
    const signer = await open(PMM, 'imported');
    const digests = Array.from({ length: 40 }, (_, i) => digestOf(i));
    digests.push(new Uint8Array(32).fill(0xff)); // ≥ the curve order
    for (const digest of digests) {
      const sig = await signer.sign(digest);
      expect(sig).toHaveLength(65);
      expect([27, 28]).toContain(sig[64]);
      expect(BigInt(hex(sig.subarray(32, 64))) <= CURVE_ORDER / 2n).toBe(true);
      expect(await recoverAddress({ hash: hex(digest), signature: hex(sig) })).toBe(signer.address);
    }
  });

  it('behavior: a signed quote equals the in-memory one but for the signature (the module draws its own nonce); both recover to one address', async () => {
    const hsmSigner = await open(PMM, 'imported');
    const memory = createDigestSigner(IMPORTED);
    const fields = {
      tokenIn: '0x4200000000000000000000000000000000000006',
      tokenOut: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913',
      timestamp: 1_700_000_000n,
      fee: 30n,
      originRate: 7n,
      userAddress: '0x1111111111111111111111111111111111111111',
    };
    const a = await signSwapQuote(hsmSigner, fields);
    const b = signSwapQuote(memory, fields);
    expect(a.digest).toBe(b.digest);
    expect(a.verificationData.length).toBe(b.verificationData.length);
    expect(a.verificationData.replace(a.signature.slice(2), '')).toBe(
      b.verificationData.replace(b.signature.slice(2), ''),
    );
    for (const s of [a.signature, b.signature])
      expect(await recoverAddress({ hash: a.digest as Hex, signature: s as Hex })).toBe(memory.address);
  });

  it('behavior: a key generated in the token is sensitive and never extractable, and signs', async () => {
    const listing = execFileSync(
      'pkcs11-tool',
      [
        '--module',
        hsm.modulePath,
        '--token-label',
        PMM,
        '--login',
        '--pin',
        PIN,
        '--list-objects',
        '--type',
        'privkey',
      ],
      { env: { ...process.env, ...hsm.env } },
    ).toString();
    const generated = listing.split(/(?=Private Key Object)/).find((o) => /label:\s+generated\b/.test(o));
    expect(generated).toMatch(/Access:.*sensitive.*never extractable/);
    const signer = await open(PMM, 'generated');
    const digest = digestOf(7);
    expect(await recoverAddress({ hash: hex(digest), signature: hex(await signer.sign(digest)) })).toBe(signer.address);
  });

  it('behavior: concurrent signs run side by side, one per pooled session, the rest wait for a session', async () => {
    const signer = await open(PMM, 'generated', { sessions: 4 });
    const pending = Array.from({ length: 8 }, (_, i) => signer.sign(digestOf(i)));
    // Only microtasks run here: no module answer can arrive (they come through the event loop).
    for (let i = 0; i < 20; i++) await Promise.resolve();
    expect(signer.pool()).toEqual({ sessions: 4, busy: 4, waiting: 4 });
    const sigs = await Promise.all(pending);
    for (const [i, sig] of sigs.entries())
      expect(await recoverAddress({ hash: hex(digestOf(i)), signature: hex(sig) })).toBe(signer.address);
    expect(signer.pool()).toEqual({ sessions: 4, busy: 0, waiting: 0 });
  });

  describe('start-up refusals: each a clear error naming the key, never the PIN', () => {
    it('error: the module cannot be loaded', async () => {
      const message = await openPkcs11Signer({
        key: parsePkcs11Uri('pkcs11:token=pmm;object=k?module-path=/nonexistent/libpkcs11.so'),
        pin: PIN,
      }).then(
        () => 'opened',
        (err: Error) => err.message,
      );
      expect(message).toMatch(
        /^key \(label "k"\) in token "pmm" of \/nonexistent\/libpkcs11\.so: cannot load the PKCS#11 module/,
      );
      expect(message).not.toContain(PIN);
    });

    it('error: no token with that label (the tokens present are named)', async () => {
      const message = await openError('nope', 'imported');
      expect(message).toMatch(new RegExp(`token "nope".*: no token labelled "nope" \\(tokens present: .*"${PMM}"`));
      expect(message).not.toContain(PIN);
    });

    it('error: no key with that label in the token', async () => {
      expect(await openError(PMM, 'missing')).toMatch(
        /label "missing".*: no private key with that label\/id in the token$/,
      );
    });

    it('error: a wrong PIN (CKR_PIN_INCORRECT), the PIN not echoed', async () => {
      const message = await openError(FRESH, 'k', '99999999');
      expect(message).toMatch(/token "fresh-.*: the token refused the PIN \(CKR_PIN_INCORRECT\)$/);
      expect(message).not.toContain('99999999');
      expect(message).not.toContain(FRESH_PIN);
    });

    it('error: a wrong PIN for a token this process is already logged in to is refused too', async () => {
      await open(PMM, 'imported');
      expect(await openError(PMM, 'generated', '11111111')).toMatch(/the token refused the PIN/);
    });

    it('error: a key on another curve (P-256) is not secp256k1', async () => {
      expect(await openError(PMM, 'p256')).toMatch(
        /label "p256".*: the key is not a secp256k1 key \(its curve: P-256\)/,
      );
    });
  });

  it('behavior: a key alone in its module failing mid-run fails signs fast with KeyUnavailableError, reports it, and signs again once its token is back', async () => {
    // Alone: SoftHSM2 sees a token folder that went away and came back only after the module
    // is initialised again, which is done only when no key of the module signs
    // (pkcs11-neighbours.test.ts: never under a healthy key).
    await Promise.all(opened.splice(0).map((s) => s.close()));
    const failures: string[] = [];
    let recovered = 0;
    const signer = await open(DRILL, 'k', {
      retryMs: 200,
      onFailure: (reason) => failures.push(reason),
      onRecovered: () => recovered++,
    });
    expect(await recoverAddress({ hash: hex(digestOf(1)), signature: hex(await signer.sign(digestOf(1))) })).toBe(
      signer.address,
    );
    const dir = hsm.tokenDir(DRILL);
    // Out of the tokens folder (SoftHSM takes any folder in it for a token).
    const away = path.join(path.dirname(path.dirname(dir)), `away-${path.basename(dir)}`);
    renameSync(dir, away);
    try {
      await expect(signer.sign(digestOf(2))).rejects.toBeInstanceOf(KeyUnavailableError);
      expect(failures.length).toBeGreaterThanOrEqual(1);
      // Within retryMs: refused at once, the module is not asked again.
      await expect(signer.sign(digestOf(3))).rejects.toThrow(/token "drill-/);
      expect(signer.pool().sessions).toBe(0);
    } finally {
      renameSync(away, dir);
    }
    const sig = await until(
      () => signer.sign(digestOf(4)).catch(() => undefined),
      30_000,
      'a sign after the module came back',
      50,
    );
    expect(await recoverAddress({ hash: hex(digestOf(4)), signature: hex(sig) })).toBe(signer.address);
    expect(recovered).toBe(1);
    expect(signer.pool().sessions).toBeGreaterThan(0);
  });
});
