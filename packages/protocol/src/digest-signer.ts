/**
 * What signs a 32-byte digest, whatever the secp256k1 implementation: the protocol's signing
 * helpers take this interface, and the service kit's `createDigestSigner` provides it (with the
 * native library the SDK must not depend on).
 */

export type SignerBackend = 'libsecp256k1' | 'noble';

/** A signer bound to one key. */
export interface DigestSigner {
  /** The key's address, EIP-55 checksummed. */
  readonly address: string;
  /** Which secp256k1 implementation signs. */
  readonly backend: SignerBackend;
  /** 65 bytes r ‖ s ‖ v of a 32-byte digest; low-s, v ∈ {27, 28}. Throws on a non-32-byte digest. */
  sign(digest: Uint8Array): Uint8Array;
}
