/**
 * A module call that never returns: a PKCS#11 shim over SoftHSM2, built with gcc for the run
 * (testkit's buildHangingModule), whose C_Sign does not return for one token while told so.
 * The sign fails after the sign timeout and the key is reported down; the key then asks the
 * module nothing until the call returns; another token's key in the same module keeps signing;
 * close() returns within its bound although a call is still stuck in the module; the module is
 * never initialised again under a call that has not returned.
 */
import { execFileSync } from 'node:child_process';
import { recoverAddress, type Hex } from 'viem';
import { buildHangingModule, startSoftHsm, until, type HangingModule, type SoftHsm } from '@pmm/testkit';
import { KeyUnavailableError } from '@pmm/protocol';
import { openPkcs11Module } from '../../src/signing-keys/pkcs11-module';
import { openPkcs11Signer, type Pkcs11Signer, type Pkcs11SignerOptions } from '../../src/signing-keys/pkcs11-signer';
import { parsePkcs11Uri } from '../../src/signing-keys/pkcs11-uri';

jest.setTimeout(60_000);

const PIN = '48151623';
const SIGN_TIMEOUT_MS = 300;
let hsm: SoftHsm;
let shim: HangingModule;
let STUCK: string, FINE: string, DOOMED: string;
const opened: Pkcs11Signer[] = [];

async function open(token: string, opts: Partial<Pkcs11SignerOptions> = {}): Promise<Pkcs11Signer> {
  const uri = hsm.uri(token, 'k').replace(hsm.modulePath, shim.modulePath);
  const signer = await openPkcs11Signer({
    key: parsePkcs11Uri(uri),
    pin: PIN,
    signTimeoutMs: SIGN_TIMEOUT_MS,
    ...opts,
  });
  opened.push(signer);
  return signer;
}

const digest = (i: number) => new Uint8Array(32).fill(i);
const hex = (b: Uint8Array): Hex => `0x${Buffer.from(b).toString('hex')}`;

/** The promise's outcome, or 'pending' when it has not settled within `ms` (the test's guard, not the bound tested). */
async function within<T>(p: Promise<T>, ms: number): Promise<{ value?: T; error?: unknown } | 'pending'> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      p.then(
        (value) => ({ value }),
        (error: unknown) => ({ error }),
      ),
      new Promise<'pending'>((resolve) => (timer = setTimeout(() => resolve('pending'), ms))),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

beforeAll(() => {
  hsm = startSoftHsm();
  shim = buildHangingModule(hsm.modulePath);
  STUCK = hsm.initToken('stuck', PIN);
  FINE = hsm.initToken('fine', PIN);
  DOOMED = hsm.initToken('doomed', PIN);
  for (const token of [STUCK, FINE, DOOMED]) hsm.generateKey(token, PIN, 'k');
});

afterAll(async () => {
  shim?.release(); // every stuck C_Sign returns, so the worker's threads end
  await Promise.all(opened.map((s) => s.close()));
  shim?.remove();
  hsm?.remove();
});

describe('a sign the module never answers', () => {
  it('behavior: the sign fails after the sign timeout, the key is reported down and asks the module nothing until the call returns; a key of another token signs on', async () => {
    const failures: string[] = [];
    let recovered = 0;
    const stuck = await open(STUCK, {
      sessions: 2,
      retryMs: 50,
      onFailure: (r) => failures.push(r),
      onRecovered: () => recovered++,
    });
    const fine = await open(FINE);
    await stuck.sign(digest(1));

    shim.hang(STUCK);
    const hung = await within(stuck.sign(digest(2)), 10 * SIGN_TIMEOUT_MS);
    expect(hung).not.toBe('pending');
    expect((hung as { error: unknown }).error).toBeInstanceOf(KeyUnavailableError);
    expect(String((hung as { error: Error }).error.message)).toMatch(
      new RegExp(`did not answer a sign within ${SIGN_TIMEOUT_MS} ms`),
    );
    expect(failures).toEqual([`the module did not answer a sign within ${SIGN_TIMEOUT_MS} ms`]);

    // Down while the call is stuck: signs fail at once, no new report, no reconnect.
    await new Promise((r) => setTimeout(r, 200));
    await expect(stuck.sign(digest(3))).rejects.toThrow(/did not answer a sign/);
    expect(failures).toHaveLength(1);
    expect(stuck.pool().sessions).toBe(0);

    // The same module, another token: signs as before.
    const sig = await fine.sign(digest(4));
    expect(await recoverAddress({ hash: hex(digest(4)), signature: hex(sig) })).toBe(fine.address);

    // The module answers again: the key reconnects and signs.
    shim.release();
    const back = await until(() => stuck.sign(digest(5)).catch(() => undefined), 10_000, 'a sign after the hang', 20);
    expect(await recoverAddress({ hash: hex(digest(5)), signature: hex(back) })).toBe(stuck.address);
    expect(recovered).toBe(1);
  });

  it('behavior: close() returns within the sign timeout while a sign is stuck in the module', async () => {
    const stuck = await open(STUCK);
    await stuck.sign(digest(1));
    shim.hang(STUCK);
    const pending = stuck.sign(digest(2)).catch((err: unknown) => err);
    const closed = await within(stuck.close(), 10 * SIGN_TIMEOUT_MS);
    expect(closed).toEqual({ value: undefined });
    expect(await pending).toBeInstanceOf(KeyUnavailableError);
    shim.release();
  });

  it('behavior: with every key of the module down, it is initialised again only once the stuck call has returned, never under it', async () => {
    const epochNow = () => {
      const m = openPkcs11Module(shim.modulePath);
      m.release();
      return m.epoch();
    };
    // These two are the module's only keys.
    await Promise.all(opened.splice(0).map((s) => s.close()));
    const stuck = await open(STUCK, { retryMs: 50 });
    const doomed = await open(DOOMED, { retryMs: 50 });
    await stuck.sign(digest(1));
    await doomed.sign(digest(1));
    const before = epochNow();
    shim.hang(STUCK);
    await expect(stuck.sign(digest(2))).rejects.toThrow(/did not answer a sign/);
    // The other key's key is deleted: every key of the module is down, so its reconnect would
    // initialise the module again, but a call is still inside it.
    execFileSync(
      'pkcs11-tool',
      [
        '--module',
        hsm.modulePath,
        '--token-label',
        DOOMED,
        '--login',
        '--pin',
        PIN,
        '--delete-object',
        '--type',
        'privkey',
        '--label',
        'k',
      ],
      { env: { ...process.env, ...hsm.env }, stdio: 'ignore' },
    );
    await expect(doomed.sign(digest(3))).rejects.toBeInstanceOf(KeyUnavailableError);
    await new Promise((r) => setTimeout(r, 100));
    // The reconnect waits up to the sign timeout for the call, then gives up the initialisation.
    await expect(doomed.sign(digest(4))).rejects.toThrow(/no private key with that label/);
    expect(epochNow()).toBe(before);

    // The call returns: the next attempt initialises the module, and the stuck key signs again.
    shim.release();
    await new Promise((r) => setTimeout(r, 100));
    await expect(doomed.sign(digest(5))).rejects.toThrow(/no private key with that label/);
    expect(epochNow()).toBe(before + 1);
    const sig = await until(() => stuck.sign(digest(6)).catch(() => undefined), 10_000, 'a sign after the hang', 20);
    expect(await recoverAddress({ hash: hex(digest(6)), signature: hex(sig) })).toBe(stuck.address);
  });
});
