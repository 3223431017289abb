/**
 * SoftHSM2 tokens for tests, in a private folder: SOFTHSM2_CONF points the module at it, so
 * tests never touch the machine's tokens. Keys are made with the Debian tools (softhsm2-util,
 * opensc's pkcs11-tool) rather than through the binding: the process under test owns the
 * module's one initialisation, and a test's own handle could finalise it under the signer.
 *
 * SoftHSM reads SOFTHSM2_CONF once, when the module is initialised: a test process uses one
 * folder (any number of tokens in it) and sets the variable before anything opens the module.
 */
import { execFileSync } from 'node:child_process';
import { createPrivateKey } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { privateKeyToAccount } from 'viem/accounts';

const MODULE_CANDIDATES = [
  '/usr/lib/softhsm/libsofthsm2.so',
  '/usr/lib/x86_64-linux-gnu/softhsm/libsofthsm2.so',
  '/usr/lib/aarch64-linux-gnu/softhsm/libsofthsm2.so',
  '/usr/local/lib/softhsm/libsofthsm2.so',
];

/** The SoftHSM2 module's path, or undefined when the package is not installed. */
export const SOFTHSM_MODULE = MODULE_CANDIDATES.find((p) => existsSync(p));

/** Throws, with the install command, when softhsm2 or opensc is missing: such tests fail loudly, never skip. */
export function requireSoftHsm(): string {
  const tools = ['softhsm2-util', 'pkcs11-tool'].filter(
    (tool) => execFileSync('sh', ['-c', `command -v ${tool} || true`]).toString().trim() === '',
  );
  if (!SOFTHSM_MODULE || tools.length > 0)
    throw new Error('SoftHSM2 is needed by this test: apt-get install softhsm2 opensc');
  return SOFTHSM_MODULE;
}

export interface SoftHsm {
  /** The private folder (config and tokens). */
  dir: string;
  modulePath: string;
  /** SOFTHSM2_CONF for child processes (this process's is set by {@link startSoftHsm}). */
  env: { SOFTHSM2_CONF: string };
  /** Creates a token; returns its label. */
  initToken(label: string, pin: string): string;
  /** Generates a non-extractable key pair in the token (curve: secp256k1 unless said). */
  generateKey(token: string, pin: string, label: string, opts?: { id?: string; curve?: string }): void;
  /** Imports a known private key (32-byte hex) and its public key into the token. */
  importKey(token: string, pin: string, label: string, privateKey: string, id?: string): void;
  /** The PKCS#11 URI of a key. */
  uri(token: string, label: string): string;
  /** Removes the folder. */
  remove(): void;
}

const SO_PIN = '87654321';

/** A private SoftHSM2 folder; sets this process's SOFTHSM2_CONF to it. */
export function startSoftHsm(): SoftHsm {
  const modulePath = requireSoftHsm();
  const dir = mkdtempSync(path.join(tmpdir(), 'pmm-softhsm-'));
  const tokens = path.join(dir, 'tokens');
  execFileSync('mkdir', ['-p', tokens]);
  const conf = path.join(dir, 'softhsm2.conf');
  writeFileSync(conf, `directories.tokendir = ${tokens}\nobjectstore.backend = file\nlog.level = ERROR\n`);
  process.env.SOFTHSM2_CONF = conf;
  const env = { ...process.env, SOFTHSM2_CONF: conf };
  const run = (cmd: string, args: string[]) => execFileSync(cmd, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  const tool = (token: string, pin: string, args: string[]) =>
    run('pkcs11-tool', ['--module', modulePath, '--token-label', token, '--login', '--pin', pin, ...args]);
  return {
    dir,
    modulePath,
    env: { SOFTHSM2_CONF: conf },
    initToken(label, pin) {
      run('softhsm2-util', ['--init-token', '--free', '--label', label, '--so-pin', SO_PIN, '--pin', pin]);
      return label;
    },
    generateKey(token, pin, label, opts = {}) {
      // pkcs11-tool makes the private key sensitive and non-extractable (CKA_EXTRACTABLE false).
      tool(token, pin, [
        '--keypairgen',
        '--key-type',
        `EC:${opts.curve ?? 'secp256k1'}`,
        '--label',
        label,
        '--id',
        opts.id ?? Buffer.from(label).toString('hex'),
        '--usage-sign',
      ]);
    },
    importKey(token, pin, label, privateKey, id) {
      const d = Buffer.from(privateKey.replace(/^0x/, ''), 'hex');
      const pub = Buffer.from(privateKeyToAccount(`0x${d.toString('hex')}`).publicKey.slice(4), 'hex');
      const jwk = {
        kty: 'EC',
        crv: 'secp256k1',
        d: d.toString('base64url'),
        x: pub.subarray(0, 32).toString('base64url'),
        y: pub.subarray(32).toString('base64url'),
      };
      const pem = path.join(dir, `${label}.pem`);
      writeFileSync(pem, createPrivateKey({ key: jwk, format: 'jwk' }).export({ type: 'pkcs8', format: 'pem' }), {
        mode: 0o600,
      });
      try {
        run('softhsm2-util', [
          '--import',
          pem,
          '--token',
          token,
          '--label',
          label,
          '--id',
          id ?? Buffer.from(label).toString('hex'),
          '--pin',
          pin,
        ]);
      } finally {
        rmSync(pem, { force: true });
      }
    },
    uri(token, label) {
      return `pkcs11:token=${encodeURIComponent(token)};object=${encodeURIComponent(label)}?module-path=${modulePath}`;
    },
    remove() {
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
