import { inspect } from 'node:util';
import fc from 'fast-check';
import { SigningKey, Wallet, computeAddress } from 'ethers';
import { recoverAddress, toHex } from 'viem';
import { privateKeyToAddress, sign as viemSign } from 'viem/accounts';
import { bytesToHex, hexToBytes, type SignerBackend } from '@pmm/protocol';
import {
  createDigestSigner,
  defaultSignerBackend,
  isNativeSecp256k1Available,
  rawSign,
} from '../../src/signing-keys/secp256k1-signer';
import { CURVE_ORDER, RUNS, digestArb, privateKeyArb, testKey } from '@pmm/testkit';

const HALF_ORDER = CURVE_ORDER >> 1n;

describe('secp256k1 signer', () => {
  it('behavior: the native libsecp256k1 backend loads on linux-x64 and is the default', () => {
    // The production hosts are linux-x64; silently running on noble would be ~10x slower.
    if (process.platform !== 'linux' || process.arch !== 'x64') return;
    expect(isNativeSecp256k1Available()).toBe(true);
    expect(defaultSignerBackend()).toBe('libsecp256k1');
    expect(createDigestSigner(testKey('1')).backend).toBe('libsecp256k1');
  });

  it('behavior: when the native binding cannot load, the default is noble and asking for libsecp256k1 throws', () => {
    jest.isolateModules(() => {
      jest.doMock('secp256k1/bindings', () => {
        throw new Error('no prebuild for this platform');
      });
      const isolated =
        require('../../src/signing-keys/secp256k1-signer') as typeof import('../../src/signing-keys/secp256k1-signer');
      expect(isolated.isNativeSecp256k1Available()).toBe(false);
      expect(isolated.defaultSignerBackend()).toBe('noble');
      const signer = isolated.createDigestSigner(testKey('1'));
      expect(signer.backend).toBe('noble');
      expect(signer.address).toBe('0x707661743fD0178AFea38a41c563d07F10EB05c0');
      expect(() => isolated.createDigestSigner(testKey('1'), { backend: 'libsecp256k1' })).toThrow(
        'secp256k1: the native libsecp256k1 binding is not available',
      );
      expect(() => isolated.rawSign('libsecp256k1')).toThrow('not available');
    });
    jest.dontMock('secp256k1/bindings');
  });

  it('behavior: both backends give the bytes of ethers SigningKey and viem sign; low-s, v 27/28, recovers to the address', async () => {
    await fc.assert(
      fc.asyncProperty(privateKeyArb, digestArb, async (key, digest) => {
        const native = createDigestSigner(key, { backend: 'libsecp256k1' });
        const noble = createDigestSigner(key, { backend: 'noble' });
        const expectedAddress = computeAddress(key);
        expect(native.address).toBe(expectedAddress);
        expect(noble.address).toBe(expectedAddress);
        expect(native.address).toBe(privateKeyToAddress(key as `0x${string}`));

        const sig = bytesToHex(native.sign(digest));
        expect(bytesToHex(noble.sign(digest))).toBe(sig);
        expect(sig).toBe(new SigningKey(key).sign(digest).serialized);
        expect(sig).toBe(await viemSign({ hash: toHex(digest), privateKey: key as `0x${string}`, to: 'hex' }));

        const bytes = hexToBytes(sig);
        expect(bytes.length).toBe(65);
        expect(BigInt(bytesToHex(bytes.subarray(32, 64)))).toBeLessThanOrEqual(HALF_ORDER);
        expect([27, 28]).toContain(bytes[64]);
        expect(await recoverAddress({ hash: toHex(digest), signature: sig as `0x${string}` })).toBe(expectedAddress);
      }),
      RUNS,
    );
  });

  it('behavior: fixed vector (derived key; equal to what viem computes)', async () => {
    const key = testKey('1');
    const digest = '0x10e7b533b7ef19ad2d3e4d51861652f7ae04b7557910c72299f008bf9eeead3b';
    /** Computed once with viem sign; re-checked against viem below. */
    const expected =
      '0x4cb66ea0f4fe12aa3692a7b306f4e8bf88b4fb9b1be139447df875930d845c5a4b82f60822b31dd3700b2f3acf50beba818d984d36d28da9bf3fb18d682a3f191b';
    expect(await viemSign({ hash: digest, privateKey: key, to: 'hex' })).toBe(expected);
    for (const backend of ['libsecp256k1', 'noble'] as const) {
      const signer = createDigestSigner(key, { backend });
      expect(signer.address).toBe('0x707661743fD0178AFea38a41c563d07F10EB05c0');
      expect(bytesToHex(signer.sign(hexToBytes(digest)))).toBe(expected);
    }
  });

  it('behavior: a digest >= N signs as digest mod N (RFC 6979), identically on both backends', async () => {
    const key = testKey('8');
    for (const value of [CURVE_ORDER, CURVE_ORDER + 5n, (1n << 256n) - 1n]) {
      const digest = hexToBytes(`0x${value.toString(16)}`);
      const reduced = hexToBytes(`0x${(value - CURVE_ORDER).toString(16).padStart(64, '0')}`);
      const expected = await viemSign({ hash: toHex(digest), privateKey: key, to: 'hex' });
      for (const backend of ['libsecp256k1', 'noble'] as const) {
        const signer = createDigestSigner(key, { backend });
        expect(bytesToHex(signer.sign(digest))).toBe(expected);
        expect(bytesToHex(signer.sign(reduced))).toBe(expected);
      }
      // The caller's digest is not modified by the reduction.
      expect(BigInt(bytesToHex(digest))).toBe(value);
    }
  });

  it('behavior: the key is accepted without 0x and in upper case', () => {
    const key = testKey('2');
    const address = new Wallet(key).address;
    expect(createDigestSigner(key.slice(2)).address).toBe(address);
    expect(createDigestSigner('0x' + key.slice(2).toUpperCase()).address).toBe(address);
    expect(createDigestSigner('0X' + key.slice(2)).address).toBe(address);
  });

  it('behavior: rawSign runs the same backend operation as sign', () => {
    const key = testKey('3');
    const digest = hexToBytes(`0x${'ab'.repeat(32)}`);
    const expected = createDigestSigner(key).sign(digest);
    const native = rawSign('libsecp256k1')(digest, hexToBytes(key)) as { signature: Uint8Array; recid: number };
    expect(bytesToHex(native.signature)).toBe(bytesToHex(expected.subarray(0, 64)));
    expect(native.recid + 27).toBe(expected[64]);
    const noble = rawSign('noble')(digest, hexToBytes(key)) as { toBytes(format: string): Uint8Array };
    expect(bytesToHex(noble.toBytes('compact'))).toBe(bytesToHex(expected.subarray(0, 64)));
  });

  describe('the key never leaks', () => {
    const key = testKey('4');
    const bare = key.slice(2);
    const signers = (['libsecp256k1', 'noble'] as SignerBackend[]).map((b) => createDigestSigner(key, { backend: b }));

    it.each(signers.map((s) => [s.backend, s]))(
      'behavior: %s signer shows only address and backend',
      (_name, signer) => {
        expect(Object.keys(signer).sort()).toEqual(['address', 'backend', 'sign']);
        expect(JSON.parse(JSON.stringify(signer))).toEqual({ address: signer.address, backend: signer.backend });
        const views = [
          JSON.stringify(signer),
          String(signer),
          inspect(signer),
          inspect(signer, { showHidden: true, depth: Infinity, customInspect: false, getters: true }),
          JSON.stringify(
            Object.getOwnPropertyNames(signer).map((n) => String((signer as unknown as Record<string, unknown>)[n])),
          ),
        ];
        for (const text of views) {
          expect(text.toLowerCase()).not.toContain(bare.toLowerCase());
        }
        expect(Object.isFrozen(signer)).toBe(true);
      },
    );
  });

  describe('bad keys are rejected without echoing them', () => {
    const valid = testKey('5').slice(2);
    const cases: Array<[string, string, string]> = [
      ['empty', '', '32 bytes'],
      ['0x only', '0x', '32 bytes'],
      ['63 digits', `0x${valid.slice(1)}`, '32 bytes'],
      ['65 digits', `0x${valid}a`, '32 bytes'],
      ['non-hex digit', `0x${valid.slice(0, 63)}g`, '32 bytes'],
      ['space inside', `0x${valid.slice(0, 31)} ${valid.slice(32)}`, '32 bytes'],
      ['zero', `0x${'0'.repeat(64)}`, 'not a valid secp256k1 scalar'],
      ['the curve order', `0x${CURVE_ORDER.toString(16)}`, 'not a valid secp256k1 scalar'],
      ['above the order', `0x${(CURVE_ORDER + 1n).toString(16)}`, 'not a valid secp256k1 scalar'],
      ['2^256-1', `0x${'f'.repeat(64)}`, 'not a valid secp256k1 scalar'],
    ];
    it.each(cases)('error: %s', (_name, key, reason) => {
      for (const backend of ['libsecp256k1', 'noble'] as const) {
        let message = '';
        try {
          createDigestSigner(key, { backend });
        } catch (err) {
          message = (err as Error).message;
        }
        expect(message).toContain(reason);
        expect(message).toMatch(/^private key: /);
        const digits = key.replace(/^0x/, '');
        if (digits.length >= 8) expect(message.toLowerCase()).not.toContain(digits.slice(0, 16).toLowerCase());
      }
    });

    it('error: a non-string key and an unknown backend', () => {
      expect(() => createDigestSigner(1234 as unknown as string)).toThrow('private key: expected a hex string');
      expect(() => createDigestSigner(testKey('6'), { backend: 'elliptic' as SignerBackend })).toThrow(
        'secp256k1: unknown backend',
      );
    });
  });

  it('error: sign rejects a digest that is not 32 bytes', () => {
    for (const backend of ['libsecp256k1', 'noble'] as const) {
      const signer = createDigestSigner(testKey('7'), { backend });
      expect(() => signer.sign(new Uint8Array(31))).toThrow('sign: digest must be 32 bytes');
      expect(() => signer.sign(new Uint8Array(33))).toThrow('sign: digest must be 32 bytes');
      expect(() => signer.sign(`0x${'00'.repeat(32)}` as unknown as Uint8Array)).toThrow(
        'sign: digest must be 32 bytes',
      );
    }
  });
});
