/**
 * Turns the configured key sources into one {@link KeySigner} per served chain: in memory
 * (hex or keystore) or in a PKCS#11 module.
 *
 * SECURITY: the private keys end up only inside the signers' closures (or never leave their
 * module). Every failure is a {@link ConfigError} naming the setting and the chain with fixed
 * text: never the key, the password, the PIN or the library's own message (which could quote
 * its input); the PKCS#11 backend's messages name the module, token and key label only.
 */
import { readFile } from 'node:fs/promises';
import { Wallet } from 'ethers';
import { ConfigError, createDigestSigner, openPkcs11Signer, registerSecret, throwConfigErrors } from '@pmm/core';
import { type KeySigner, type SignerBackend } from '@pmm/protocol';
import type { ChainSignerConfig, KeySource, SignerConfig } from './config';

/** The signer of each served chain. */
export type ChainSigners = ReadonlyMap<number, KeySigner>;

/** What the signer hears of a key in a module that fails and comes back (logs, metrics). */
export interface KeyHealthHooks {
  failed(chainId: number, reason: string): void;
  /** The token refused the PIN for good: no login until a new PIN file or a restart. */
  pinRefused(chainId: number, reason: string): void;
  recovered(chainId: number): void;
}

async function privateKeyOf(chainId: number, key: Exclude<KeySource, { kind: 'pkcs11' }>): Promise<string> {
  if (key.kind === 'hex') return key.privateKey;
  let json: string;
  try {
    json = await readFile(key.path, 'utf8');
  } catch {
    throw new ConfigError(`${key.env}: chain ${chainId}: cannot read the keystore file ${key.path}`);
  }
  let privateKey: string;
  try {
    // scrypt: deliberately slow (about a second); done once per chain at boot.
    privateKey = (await Wallet.fromEncryptedJson(json, key.password)).privateKey;
  } catch {
    throw new ConfigError(
      `${key.env}: chain ${chainId}: cannot decrypt the keystore (wrong password or not a JSON keystore)`,
    );
  }
  // The decrypted key was never a configured value: register it so logs redact it too.
  registerSecret(privateKey);
  return privateKey;
}

async function signerFor(
  chain: ChainSignerConfig,
  config: Pick<SignerConfig, 'signerBackend' | 'pkcs11Sessions' | 'pkcs11SignTimeoutMs'>,
  health: KeyHealthHooks | undefined,
): Promise<KeySigner> {
  const { chainId, key } = chain;
  if (key.kind === 'pkcs11') {
    try {
      return await openPkcs11Signer({
        key: key.key,
        pin: key.pin,
        ...(key.readPin ? { readPin: key.readPin } : {}),
        sessions: config.pkcs11Sessions,
        signTimeoutMs: config.pkcs11SignTimeoutMs,
        onFailure: (reason) => health?.failed(chainId, reason),
        onPinRefused: (reason) => health?.pinRefused(chainId, reason),
        onRecovered: () => health?.recovered(chainId),
      });
    } catch (err) {
      // Names the module, token and key label and what is wrong; the PIN is never in it.
      throw new ConfigError(
        `${key.env}: chain ${chainId}: ${err instanceof Error ? err.message : 'cannot open the key'}`,
      );
    }
  }
  const privateKey = await privateKeyOf(chainId, key);
  const backend: SignerBackend | undefined = config.signerBackend === 'auto' ? undefined : config.signerBackend;
  try {
    return createDigestSigner(privateKey, backend ? { backend } : {});
  } catch (err) {
    // createDigestSigner's messages are fixed text that never quotes the key.
    const reason = err instanceof Error ? err.message : 'invalid key';
    throw new ConfigError(`${key.env}: chain ${chainId}: ${reason}`);
  }
}

/**
 * Refuses one signing key on several chains: the signed digest carries no chain id, so a
 * signature issued for one chain would be valid on every other chain whose router trusts the
 * same address. Names each group of chains and the address (public), never the key. Holds
 * across backends: the same key in a module and in a file is the same address.
 */
function assertOneChainPerKey(signers: ChainSigners): void {
  const chainsOf = new Map<string, number[]>();
  for (const [chainId, signer] of signers) {
    const address = signer.address.toLowerCase();
    chainsOf.set(address, [...(chainsOf.get(address) ?? []), chainId]);
  }
  const shared = [...chainsOf.values()].filter((chains) => chains.length > 1);
  if (shared.length === 0) return;
  throwConfigErrors(
    shared.map(
      (chains) =>
        `chains ${chains.join(' and ')} have the same signing key (${signers.get(chains[0]!)!.address}): ` +
        'a quote signed for one would be valid on the other (the signed digest carries no chain id); give each chain its own key',
    ),
  );
}

/** Releases every signer's module sessions (in-memory signers hold none). */
export async function closeSigningKeys(signers: ChainSigners): Promise<void> {
  await Promise.allSettled([...signers.values()].map((signer) => signer.close?.()));
}

/**
 * Loads the signing key of every served chain (in SERVED_CHAINS order). Rejects with a
 * ConfigError on the first chain whose key cannot be read, decrypted, found or used, and when
 * two chains resolve to the same signer address; the keys opened before are released then.
 */
export async function loadSigningKeys(
  config: Pick<SignerConfig, 'servedChains' | 'chains' | 'signerBackend' | 'pkcs11Sessions' | 'pkcs11SignTimeoutMs'>,
  health?: KeyHealthHooks,
): Promise<ChainSigners> {
  const out = new Map<number, KeySigner>();
  try {
    for (const chainId of config.servedChains) {
      const chain = config.chains[chainId];
      if (!chain) throw new ConfigError(`chain ${chainId}: no signer configuration`);
      out.set(chainId, await signerFor(chain, config, health));
    }
    assertOneChainPerKey(out);
  } catch (err) {
    await closeSigningKeys(out);
    throw err;
  }
  return out;
}
