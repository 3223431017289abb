/**
 * EIP-712 signature for the router's `quote()` (spec 4.3): primary type
 * `AmmVerification(address tokenIn,address tokenOut,uint256 timestampInMilisec)` under the
 * domain { name 'VerificationImpl', version '1', chainId, verifyingContract: verifier }.
 * (`Milisec` is the spelling of the contract and the spec; it is part of the type hash.)
 *
 * The digest is hand-written (keccak(0x1901 ‖ domainSeparator ‖ structHash)) for speed;
 * {@link ammVerificationTypedData} gives the same data in the shape ethers' and viem's
 * `signTypedData` take, and the tests pin that both hash it to the same digest.
 */
import { keccak256 } from './keccak256';
import { WORD_BYTES, bytesToHex, writeAddressWord, writeUint256Word } from './abi-words';
import type { DigestSigner } from './digest-signer';
import { ADDRESS_PATTERN } from './parse-address';

export interface AmmVerificationParams {
  chainId: number;
  /** The EIP-712 verifying contract (spec: the same address on every chain). */
  verifier: string;
  tokenIn: string;
  tokenOut: string;
  /** Milliseconds since the epoch; `quote` accepts it within 10 s of the block time. */
  timestampInMilisec: bigint;
}

export const AMM_VERIFICATION_DOMAIN_NAME = 'VerificationImpl' as const;
export const AMM_VERIFICATION_DOMAIN_VERSION = '1' as const;

/** A `0x`-prefixed address, typed the way viem wants it. */
type HexAddress = `0x${string}`;

/**
 * The EIP-712 types, without `EIP712Domain` (ethers derives it and rejects an unused type;
 * viem derives it from the domain). Literal member types let viem infer the message type;
 * a mutable tuple keeps it assignable to ethers' `Record<string, TypedDataField[]>`.
 * (A type alias, not an interface: only aliases get the implicit index signature both need.)
 */
export type AmmVerificationTypes = {
  AmmVerification: [
    { name: 'tokenIn'; type: 'address' },
    { name: 'tokenOut'; type: 'address' },
    { name: 'timestampInMilisec'; type: 'uint256' },
  ];
};

/** Typed data in the shape ethers `signTypedData(domain, types, message)` and viem take as is. */
export interface AmmVerificationTypedData {
  domain: { name: 'VerificationImpl'; version: '1'; chainId: number; verifyingContract: HexAddress };
  types: AmmVerificationTypes;
  primaryType: 'AmmVerification';
  message: { tokenIn: HexAddress; tokenOut: HexAddress; timestampInMilisec: bigint };
}

const ADDRESS_RE = new RegExp(ADDRESS_PATTERN);

function asHexAddress(value: string, field: string): HexAddress {
  if (!ADDRESS_RE.test(value)) throw new Error(`${field}: expected 0x followed by 40 hex digits`);
  return value as HexAddress;
}

/**
 * The typed data of one `quote()` authorisation, for ethers/viem signers and for wallets.
 * A fresh object per call (ethers may mutate what it is given). Addresses are passed
 * through in their given case; throws a plain Error on a malformed one.
 */
export function ammVerificationTypedData(p: AmmVerificationParams): AmmVerificationTypedData {
  return {
    domain: {
      name: AMM_VERIFICATION_DOMAIN_NAME,
      version: AMM_VERIFICATION_DOMAIN_VERSION,
      chainId: p.chainId,
      verifyingContract: asHexAddress(p.verifier, 'verifier'),
    },
    types: {
      AmmVerification: [
        { name: 'tokenIn', type: 'address' },
        { name: 'tokenOut', type: 'address' },
        { name: 'timestampInMilisec', type: 'uint256' },
      ],
    },
    primaryType: 'AmmVerification',
    message: {
      tokenIn: asHexAddress(p.tokenIn, 'tokenIn'),
      tokenOut: asHexAddress(p.tokenOut, 'tokenOut'),
      timestampInMilisec: p.timestampInMilisec,
    },
  };
}

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

/** `0x` hex of the 65-byte signature r ‖ s ‖ v (low-s, v ∈ {27, 28}) `quote()` takes as `sig`. */
export function signAmmVerification(signer: DigestSigner, p: AmmVerificationParams): string {
  return bytesToHex(signer.sign(ammVerificationDigest(p)));
}
