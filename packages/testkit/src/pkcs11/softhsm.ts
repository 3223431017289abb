/**
 * SoftHSM2 tokens for tests, in the run's private folder (softhsm-run-folder.ts sets
 * SOFTHSM2_CONF for the whole jest run), each token with a label of its own so that test files
 * running side by side never meet. Keys are made with the Debian tools (softhsm2-util, opensc's
 * pkcs11-tool) rather than through the binding: the code under test owns the module's one
 * initialisation in a process, and a test's own handle could finalise it under the signer.
 *
 * SoftHSM lists the tokens that exist when the module is initialised: create every token a
 * test needs before the code under test opens the module (in beforeAll, before any key).
 */
import { execFileSync } from 'node:child_process';
import { createPrivateKey, randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { privateKeyToAccount } from 'viem/accounts';
import { RUN_FOLDER_ENV } from './softhsm-run-folder';

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
    (tool) =>
      execFileSync('sh', ['-c', `command -v ${tool} || true`])
        .toString()
        .trim() === '',
  );
  if (!SOFTHSM_MODULE || tools.length > 0)
    throw new Error('SoftHSM2 is needed by this test: apt-get install softhsm2 opensc');
  return SOFTHSM_MODULE;
}

export interface SoftHsm {
  modulePath: string;
  /** SOFTHSM2_CONF, for the environment of a process a test starts. */
  env: { SOFTHSM2_CONF: string };
  /** Creates a token; returns its label (`name` with a suffix of this test's own). */
  initToken(name: string, pin: string): string;
  /** Generates a non-extractable key pair in the token (curve: secp256k1 unless said). */
  generateKey(token: string, pin: string, label: string, opts?: { id?: string; curve?: string }): void;
  /** Imports a known private key (32-byte hex) and its public key into the token. */
  importKey(token: string, pin: string, label: string, privateKey: string, id?: string): void;
  /** The folder of a token's objects (a fault drill moves it away to make the token fail). */
  tokenDir(label: string): string;
  /** The PKCS#11 URI of a key. */
  uri(token: string, label: string): string;
  /** Deletes the tokens this test made. */
  remove(): void;
}

const SO_PIN = '87654321';

/** This test's tokens in the run's SoftHSM folder. */
export function startSoftHsm(): SoftHsm {
  const modulePath = requireSoftHsm();
  const conf = process.env.SOFTHSM2_CONF;
  const runDir = process.env[RUN_FOLDER_ENV];
  if (!conf || !runDir)
    throw new Error('no private SoftHSM folder: run the tests through jest (jest.config.js globalSetup)');
  const tokens = path.join(runDir, 'tokens');
  const suffix = randomBytes(4).toString('hex');
  const made: string[] = [];
  const env = { ...process.env, SOFTHSM2_CONF: conf };
  const run = (cmd: string, args: string[]) => execFileSync(cmd, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  const tool = (token: string, pin: string, args: string[]) =>
    run('pkcs11-tool', ['--module', modulePath, '--token-label', token, '--login', '--pin', pin, ...args]);
  const idOf = (label: string) => Buffer.from(label).toString('hex');
  return {
    modulePath,
    env: { SOFTHSM2_CONF: conf },
    initToken(name, pin) {
      const label = `${name}-${suffix}`;
      run('softhsm2-util', ['--init-token', '--free', '--label', label, '--so-pin', SO_PIN, '--pin', pin]);
      made.push(label);
      return label;
    },
    generateKey(token, pin, label, opts = {}) {
      // pkcs11-tool makes the private key sensitive and never extractable.
      tool(token, pin, [
        '--keypairgen',
        '--key-type',
        `EC:${opts.curve ?? 'secp256k1'}`,
        '--label',
        label,
        '--id',
        opts.id ?? idOf(label),
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
      const pem = path.join(runDir, `${token}-${label}.pem`);
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
          id ?? idOf(label),
          '--pin',
          pin,
        ]);
      } finally {
        rmSync(pem, { force: true });
      }
    },
    tokenDir(label) {
      // SoftHSM names token folders by a UUID; token.object holds the label (space-padded).
      const found = readdirSync(tokens).find((d) => {
        const file = path.join(tokens, d, 'token.object');
        return existsSync(file) && readFileSync(file).includes(Buffer.from(label.padEnd(32, ' ')));
      });
      if (!found) throw new Error(`no SoftHSM token folder for "${label}"`);
      return path.join(tokens, found);
    },
    uri(token, label) {
      return `pkcs11:token=${encodeURIComponent(token)};object=${encodeURIComponent(label)}?module-path=${modulePath}`;
    },
    remove() {
      for (const label of made.splice(0)) {
        try {
          rmSync(this.tokenDir(label), { recursive: true, force: true });
        } catch {
          // already gone
        }
      }
    },
  };
}
