/**
 * Signs 32-byte digests with one secp256k1 key, in the form the router and EIP-712
 * verifiers expect: 65 bytes r ‖ s ‖ v, low-s, v ∈ {27, 28}.
 *
 * Two backends give identical bytes (both use RFC 6979 deterministic nonces without extra
 * entropy and normalise to low-s; the tests pin this against ethers and viem):
 * - `libsecp256k1`: the native library through the `secp256k1` package (~12,900 signs/s);
 * - `noble`: `@noble/curves`, pure JS (~1,500 signs/s), used only when the native binding
 *   cannot be loaded (no prebuild for the platform) or when asked for explicitly.
 *
 * SECURITY: the private key lives only in the closure of the signer; it is never a
 * property of the returned object, never serialised by JSON.stringify or util.inspect,
 * and never part of an error message.
 */
import { inspect } from 'node:util';
import {
  keccak256,
  bytesToHex,
  hexToBytes,
  type DigestSigner,
  type SignerBackend,
  toChecksumAddress,
} from '@pmm/protocol';
import { secp256k1 as nobleSecp256k1 } from '@noble/curves/secp256k1';

/** The subset of the `secp256k1` package's API (v5, Uint8Array based) that we call. */
interface NativeSecp256k1 {
  privateKeyVerify(seckey: Uint8Array): boolean;
  publicKeyCreate(seckey: Uint8Array, compressed?: boolean): Uint8Array;
  ecdsaSign(
    msg32: Uint8Array,
    seckey: Uint8Array,
    options?: object,
    output?: Uint8Array,
  ): { signature: Uint8Array; recid: number };
  ecdsaRecover(sig: Uint8Array, recid: number, msg32: Uint8Array, compressed?: boolean): Uint8Array;
}

/** undefined: not tried yet; null: tried and failed. */
let nativeBinding: NativeSecp256k1 | null | undefined;

function loadNative(): NativeSecp256k1 | null {
  if (nativeBinding === undefined) {
    try {
      // `secp256k1/bindings` is the native build only: plain `secp256k1` silently falls back
      // to elliptic (slow, and not what we measured), which we would rather not hide.
      nativeBinding = require('secp256k1/bindings') as NativeSecp256k1;
    } catch {
      nativeBinding = null;
    }
  }
  return nativeBinding;
}

/** True when the native libsecp256k1 binding loads on this machine. */
export function isNativeSecp256k1Available(): boolean {
  return loadNative() !== null;
}

/** The backend {@link createDigestSigner} uses when none is requested. */
export function defaultSignerBackend(): SignerBackend {
  return isNativeSecp256k1Available() ? 'libsecp256k1' : 'noble';
}

function requireNative(): NativeSecp256k1 {
  const native = loadNative();
  if (native === null) throw new Error('secp256k1: the native libsecp256k1 binding is not available');
  return native;
}

/** Order of the secp256k1 group; a private key is a scalar in 1 … N-1. */
const CURVE_ORDER = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
const NO_OPTIONS = Object.freeze({});

/**
 * Parses a private key given as 64 hex digits, with or without `0x`. The message of every
 * error is fixed text: the input may be a real key with a typo, so it is never echoed.
 */
function parsePrivateKey(privateKeyHex: string): { bytes: Uint8Array; scalar: bigint } {
  if (typeof privateKeyHex !== 'string') throw new Error('private key: expected a hex string');
  const prefixed =
    privateKeyHex.startsWith('0x') || privateKeyHex.startsWith('0X') ? privateKeyHex : '0x' + privateKeyHex;
  if (prefixed.length !== 66) throw new Error('private key: expected 32 bytes (64 hex digits)');
  let bytes: Uint8Array;
  try {
    bytes = hexToBytes(prefixed);
  } catch {
    throw new Error('private key: expected 32 bytes (64 hex digits)');
  }
  const scalar = BigInt(bytesToHex(bytes));
  if (scalar === 0n || scalar >= CURVE_ORDER) throw new Error('private key: not a valid secp256k1 scalar');
  return { bytes, scalar };
}

/** Address of an uncompressed public key (0x04 ‖ X ‖ Y): last 20 bytes of keccak(X ‖ Y). */
export function addressOfPublicKey(uncompressed: Uint8Array): string {
  const hash = keccak256(uncompressed.subarray(1));
  return toChecksumAddress(bytesToHex(hash.subarray(12)).slice(2));
}

function checkDigest(digest: Uint8Array): void {
  if (!(digest instanceof Uint8Array) || digest.length !== 32) throw new Error('sign: digest must be 32 bytes');
}

/**
 * The digest as libsecp256k1 must see it to match RFC 6979 (and so noble, ethers, viem).
 * ECDSA signs e = digest mod N either way, but libsecp256k1 seeds its RFC 6979 nonce with
 * the raw 32 bytes while RFC 6979 (bits2octets) seeds it with digest mod N: for a digest
 * ≥ N the two give different, equally valid, signatures. Reducing first makes the bytes
 * identical. Only digests starting with 0xff can be ≥ N, so the common case costs one compare.
 */
function reduceDigest(digest: Uint8Array): Uint8Array {
  if (digest[0] !== 0xff) return digest;
  const value = BigInt(bytesToHex(digest));
  if (value < CURVE_ORDER) return digest;
  return hexToBytes('0x' + (value - CURVE_ORDER).toString(16).padStart(64, '0'));
}

/**
 * Creates a signer for one key. `opts.backend` forces a backend (asking for
 * `libsecp256k1` where it cannot load throws); by default the native one is used when it
 * loads, else noble. Throws a plain Error, never mentioning the key, when the key is not
 * 32 bytes of hex or not a valid scalar (0 or ≥ the curve order).
 */
export function createDigestSigner(privateKeyHex: string, opts: { backend?: SignerBackend } = {}): DigestSigner {
  const backend = opts.backend ?? defaultSignerBackend();
  if (backend !== 'libsecp256k1' && backend !== 'noble') throw new Error('secp256k1: unknown backend');
  const key = parsePrivateKey(privateKeyHex);

  let sign: (digest: Uint8Array) => Uint8Array;
  let publicKey: Uint8Array;
  if (backend === 'libsecp256k1') {
    const native = requireNative();
    if (!native.privateKeyVerify(key.bytes)) throw new Error('private key: not a valid secp256k1 scalar');
    publicKey = native.publicKeyCreate(key.bytes, false);
    const seckey = key.bytes;
    sign = (digest) => {
      checkDigest(digest);
      const out = new Uint8Array(65);
      // libsecp256k1 writes r ‖ s straight into our buffer and always produces low-s.
      const { recid } = native.ecdsaSign(reduceDigest(digest), seckey, NO_OPTIONS, out.subarray(0, 64));
      out[64] = 27 + recid;
      return out;
    };
  } else {
    publicKey = nobleSecp256k1.getPublicKey(key.scalar, false);
    const scalar = key.scalar;
    sign = (digest) => {
      checkDigest(digest);
      // lowS and no extra entropy are noble's defaults; spelled out because they are the contract.
      const sig = nobleSecp256k1.sign(digest, scalar, { lowS: true, extraEntropy: false, prehash: false });
      const out = new Uint8Array(65);
      out.set(sig.toBytes('compact'), 0); // r ‖ s, 32 bytes each
      out[64] = 27 + sig.recovery;
      return out;
    };
  }

  const address = addressOfPublicKey(publicKey);
  const describe = { address, backend };
  // Only address, backend and sign are own enumerable properties; the key is captured by
  // `sign` alone. toJSON and inspect are pinned too, so a logged signer shows no more.
  const signer = {
    address,
    backend,
    sign,
    toJSON: () => describe,
    toString: () => `DigestSigner(${address}, ${backend})`,
    [inspect.custom]: () => `DigestSigner { address: '${address}', backend: '${backend}' }`,
  };
  Object.defineProperty(signer, 'toJSON', { enumerable: false });
  Object.defineProperty(signer, 'toString', { enumerable: false });
  Object.defineProperty(signer, inspect.custom, { enumerable: false });
  return Object.freeze(signer);
}

const HALF_ORDER = CURVE_ORDER >> 1n;

function recoverPublicKey(rs: Uint8Array, recid: number, digest: Uint8Array): Uint8Array | undefined {
  try {
    const native = loadNative();
    if (native) return native.ecdsaRecover(rs, recid, digest, false);
    return nobleSecp256k1.Signature.fromCompact(rs).addRecoveryBit(recid).recoverPublicKey(digest).toRawBytes(false);
  } catch {
    return undefined; // no point for this recovery id
  }
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && a.every((byte, i) => byte === b[i]);
}

/**
 * Completes a bare ECDSA signature r ‖ s (64 bytes, as a hardware module's CKM_ECDSA gives it)
 * into the 65-byte r ‖ s ‖ v the router takes: s made low (n − s when s > n/2, the same
 * signature to ECDSA but the only form Ethereum accepts), and v = 27 + the recovery id that
 * recovers `publicKey` (uncompressed 0x04 ‖ X ‖ Y). Throws a plain Error when r or s is out of
 * range or neither id recovers that key (the module signed with another key).
 */
export function toRecoverableSignature(digest: Uint8Array, rs: Uint8Array, publicKey: Uint8Array): Uint8Array {
  checkDigest(digest);
  if (rs.length !== 64) throw new Error('sign: the module returned a signature that is not 64 bytes');
  const r = BigInt(bytesToHex(rs.subarray(0, 32)));
  let s = BigInt(bytesToHex(rs.subarray(32)));
  if (r === 0n || r >= CURVE_ORDER || s === 0n || s >= CURVE_ORDER) throw new Error('sign: r or s out of range');
  const out = new Uint8Array(65);
  out.set(rs.subarray(0, 32), 0);
  if (s > HALF_ORDER) s = CURVE_ORDER - s;
  out.set(hexToBytes('0x' + s.toString(16).padStart(64, '0')), 32);
  for (const recid of [0, 1]) {
    const recovered = recoverPublicKey(out.subarray(0, 64), recid, digest);
    if (recovered && sameBytes(recovered, publicKey)) {
      out[64] = 27 + recid;
      return out;
    }
  }
  throw new Error('sign: the signature does not recover to the key');
}

/**
 * The bare backend call, for benchmarks only: `(digest, privateKey)` → the library's own
 * result, with none of the validation, copying or v-shifting of {@link DigestSigner.sign}.
 * The key is taken as 32 raw bytes and is not validated here.
 */
export function rawSign(backend: SignerBackend): (digest: Uint8Array, privateKey: Uint8Array) => unknown {
  if (backend === 'libsecp256k1') {
    const native = requireNative();
    return (digest, privateKey) => native.ecdsaSign(digest, privateKey);
  }
  return (digest, privateKey) =>
    nobleSecp256k1.sign(digest, privateKey, { lowS: true, extraEntropy: false, prehash: false });
}
