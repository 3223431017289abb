/**
 * EIP-712 digest of the router's `quote()` authorisation (spec 4.3), hand-written
 * (keccak(0x1901 ‖ domainSeparator ‖ structHash)) for speed; the typed data it hashes is in
 * amm-verification-typed-data.ts, and the tests pin that ethers and viem hash that data to the
 * same digest.
 */
import { keccak256 } from '../abi/keccak256';
import { WORD_BYTES, bytesToHex, writeAddressWord, writeUint256Word } from '../abi/abi-words';
import type { DigestSigner, KeySigner } from './digest-signer';
import {
  AMM_VERIFICATION_DOMAIN_NAME,
  AMM_VERIFICATION_DOMAIN_VERSION,
  type AmmVerificationParams,
} from './amm-verification-typed-data';

const utf8 = (s: string): Uint8Array => new TextEncoder().encode(s);

const DOMAIN_TYPE_HASH = keccak256(
  utf8('EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)'),
);
const NAME_HASH = keccak256(utf8(AMM_VERIFICATION_DOMAIN_NAME));
const VERSION_HASH = keccak256(utf8(AMM_VERIFICATION_DOMAIN_VERSION));
const STRUCT_TYPE_HASH = keccak256(
  utf8('AmmVerification(address tokenIn,address tokenOut,uint256 timestampInMilisec)'),
);

/**
 * Domain separators by `chainId:verifier-lowercase`. Bounded: a deployment has a handful
 * of (chain, verifier) pairs; the cap only guards against a caller passing unbounded keys.
 */
const domainSeparators = new Map<string, Uint8Array>();
const MAX_CACHED_DOMAINS = 64;

/** keccak(typeHash ‖ keccak(name) ‖ keccak(version) ‖ chainId ‖ verifyingContract), as a fresh copy. */
export function ammVerificationDomainSeparator(chainId: number, verifier: string): Uint8Array {
  return cachedDomainSeparator(chainId, verifier).slice();
}

/** INVARIANT: the returned array is shared by the cache and must not be mutated. */
function cachedDomainSeparator(chainId: number, verifier: string): Uint8Array {
  const cacheKey = `${chainId}:${verifier.toLowerCase()}`;
  const cached = domainSeparators.get(cacheKey);
  if (cached !== undefined) return cached;
  if (!Number.isSafeInteger(chainId) || chainId < 0) throw new Error('chainId: expected a non-negative integer');
  const buf = new Uint8Array(5 * WORD_BYTES);
  buf.set(DOMAIN_TYPE_HASH, 0);
  buf.set(NAME_HASH, 32);
  buf.set(VERSION_HASH, 64);
  writeUint256Word(buf, 96, BigInt(chainId));
  writeAddressWord(buf, 128, verifier);
  const separator = keccak256(buf);
  if (domainSeparators.size >= MAX_CACHED_DOMAINS) domainSeparators.clear();
  domainSeparators.set(cacheKey, separator);
  return separator;
}

/** keccak(typeHash ‖ tokenIn ‖ tokenOut ‖ timestampInMilisec). */
function structHash(p: AmmVerificationParams): Uint8Array {
  const buf = new Uint8Array(4 * WORD_BYTES);
  buf.set(STRUCT_TYPE_HASH, 0);
  writeAddressWord(buf, 32, p.tokenIn);
  writeAddressWord(buf, 64, p.tokenOut);
  writeUint256Word(buf, 96, p.timestampInMilisec);
  return keccak256(buf);
}

/**
 * The EIP-712 digest keccak(0x19 0x01 ‖ domainSeparator ‖ structHash) of one `quote()`
 * authorisation. Throws a plain Error on a malformed address or out-of-range number.
 */
export function ammVerificationDigest(p: AmmVerificationParams): Uint8Array {
  const buf = new Uint8Array(2 + 2 * WORD_BYTES);
  buf[0] = 0x19;
  buf[1] = 0x01;
  buf.set(cachedDomainSeparator(p.chainId, p.verifier), 2);
  buf.set(structHash(p), 2 + WORD_BYTES);
  return keccak256(buf);
}

/**
 * `0x` hex of the 65-byte signature r ‖ s ‖ v (low-s, v ∈ {27, 28}) `quote()` takes as `sig`;
 * a promise of it when the key is in a hardware module.
 */
export function signAmmVerification(signer: DigestSigner, p: AmmVerificationParams): string;
export function signAmmVerification(signer: KeySigner, p: AmmVerificationParams): string | Promise<string>;
export function signAmmVerification(signer: KeySigner, p: AmmVerificationParams): string | Promise<string> {
  const signature = signer.sign(ammVerificationDigest(p));
  return signature instanceof Promise ? signature.then(bytesToHex) : bytesToHex(signature);
}
