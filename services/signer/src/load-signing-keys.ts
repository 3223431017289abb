/**
 * Turns the configured key sources into one {@link DigestSigner} per served chain.
 *
 * SECURITY: the private keys end up only inside the signers' closures. Every failure is a
 * {@link ConfigError} naming the setting and the chain with fixed text: never the key, the
 * password or the library's own message (which could quote its input).
 */
import { readFile } from 'node:fs/promises';
import { Wallet } from 'ethers';
import { ConfigError, createDigestSigner, registerSecret, throwConfigErrors } from '@pmm/core';
import { type DigestSigner, type SignerBackend } from '@pmm/protocol';
import type { ChainSignerConfig, KeySource, SignerConfig } from './config';

/** The signer of each served chain. */
export type ChainSigners = ReadonlyMap<number, DigestSigner>;

async function privateKeyOf(chainId: number, key: KeySource): Promise<string> {
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

async function signerFor(chain: ChainSignerConfig, backend: SignerBackend | undefined): Promise<DigestSigner> {
  const privateKey = await privateKeyOf(chain.chainId, chain.key);
  try {
    return createDigestSigner(privateKey, backend ? { backend } : {});
  } catch (err) {
    // createDigestSigner's messages are fixed text that never quotes the key.
    const reason = err instanceof Error ? err.message : 'invalid key';
    throw new ConfigError(`${chain.key.env}: chain ${chain.chainId}: ${reason}`);
  }
}

/**
 * Refuses one signing key on several chains: the signed digest carries no chain id, so a
 * signature issued for one chain would be valid on every other chain whose router trusts the
 * same address. Names each group of chains and the address (public), never the key.
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

/**
 * Loads the signing key of every served chain (in SERVED_CHAINS order). Rejects with a
 * ConfigError on the first chain whose key cannot be read, decrypted or used, and when two
 * chains resolve to the same signer address.
 */
export async function loadSigningKeys(
  config: Pick<SignerConfig, 'servedChains' | 'chains' | 'signerBackend'>,
): Promise<ChainSigners> {
  const backend = config.signerBackend === 'auto' ? undefined : config.signerBackend;
  const out = new Map<number, DigestSigner>();
  for (const chainId of config.servedChains) {
    const chain = config.chains[chainId];
    if (!chain) throw new ConfigError(`chain ${chainId}: no signer configuration`);
    out.set(chainId, await signerFor(chain, backend));
  }
  assertOneChainPerKey(out);
  return out;
}
