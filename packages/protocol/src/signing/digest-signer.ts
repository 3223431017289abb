/**
 * What signs a 32-byte digest, whatever holds the key: the protocol's signing helpers take
 * these interfaces, and the service kit provides them (`createDigestSigner` in memory, with the
 * native library the SDK must not depend on; `openPkcs11Signer` in a hardware module).
 */

/** The in-memory secp256k1 implementations. */
export type SignerBackend = 'libsecp256k1' | 'noble';

/** Where a key lives and what signs with it: in memory, or a PKCS#11 module (the key never leaves it). */
export type KeyBackend = SignerBackend | 'pkcs11';

/**
 * A signer bound to one key, whose signature may come later (a hardware module answers
 * asynchronously). Every signer gives the same shape: 65 bytes r ‖ s ‖ v, low-s, v ∈ {27, 28},
 * recovering to {@link KeySigner.address}.
 */
export interface KeySigner {
  /** The key's address, EIP-55 checksummed. */
  readonly address: string;
  readonly backend: KeyBackend;
  /**
   * 65 bytes r ‖ s ‖ v of a 32-byte digest. Throws on a non-32-byte digest; throws (or
   * rejects with) {@link KeyUnavailableError} when the key's module cannot sign for now.
   */
  sign(digest: Uint8Array): Uint8Array | Promise<Uint8Array>;
  /** Releases what the signer holds outside the process (a module's sessions); absent when nothing. */
  close?(): Promise<void>;
}

/** A signer bound to one key held in memory: signs synchronously. */
export interface DigestSigner extends KeySigner {
  /** Which secp256k1 implementation signs. */
  readonly backend: SignerBackend;
  /** 65 bytes r ‖ s ‖ v of a 32-byte digest; low-s, v ∈ {27, 28}. Throws on a non-32-byte digest. */
  sign(digest: Uint8Array): Uint8Array;
}

/**
 * The key cannot sign for now (its hardware module failed, was unplugged or lost its session):
 * a transient outage, answered 503 and retried, not a bug. The message never names the key's secrets.
 */
export class KeyUnavailableError extends Error {
  override readonly name = 'KeyUnavailableError';
}
