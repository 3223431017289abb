/**
 * The EIP-712 typed data of the router's `quote()` authorisation (spec 4.3): primary type
 * `AmmVerification(address tokenIn,address tokenOut,uint256 timestampInMilisec)` under the
 * domain { name 'VerificationImpl', version '1', chainId, verifyingContract: verifier }, in the
 * shape ethers' and viem's `signTypedData` take. (`Milisec` is the spelling of the contract and
 * the spec; it is part of the type hash.) Apart from the digest (amm-verification.ts) so that
 * what only signs with a wallet, like the SDK, does not load a keccak implementation.
 */
import { isAddress } from '../requests/parse-address';

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

function asHexAddress(value: string, field: string): HexAddress {
  if (!isAddress(value)) throw new Error(`${field}: expected 0x followed by 40 hex digits`);
  return value as HexAddress;
}

/** The EIP-712 domain of the authorisation on one chain; throws a plain Error on a malformed verifier. */
export function ammVerificationDomain(chainId: number, verifier: string): AmmVerificationTypedData['domain'] {
  return {
    name: AMM_VERIFICATION_DOMAIN_NAME,
    version: AMM_VERIFICATION_DOMAIN_VERSION,
    chainId,
    verifyingContract: asHexAddress(verifier, 'verifier'),
  };
}

/** The EIP-712 types of the authorisation, a fresh object per call (ethers may mutate what it is given). */
export function ammVerificationTypes(): AmmVerificationTypes {
  return {
    AmmVerification: [
      { name: 'tokenIn', type: 'address' },
      { name: 'tokenOut', type: 'address' },
      { name: 'timestampInMilisec', type: 'uint256' },
    ],
  };
}

/**
 * The typed data of one `quote()` authorisation, for ethers/viem signers and for wallets.
 * A fresh object per call. Addresses are passed through in their given case; throws a plain
 * Error on a malformed one.
 */
export function ammVerificationTypedData(p: AmmVerificationParams): AmmVerificationTypedData {
  return {
    domain: ammVerificationDomain(p.chainId, p.verifier),
    types: ammVerificationTypes(),
    primaryType: 'AmmVerification',
    message: {
      tokenIn: asHexAddress(p.tokenIn, 'tokenIn'),
      tokenOut: asHexAddress(p.tokenOut, 'tokenOut'),
      timestampInMilisec: p.timestampInMilisec,
    },
  };
}
