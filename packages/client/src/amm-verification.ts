/**
 * Signs the EIP-712 authorisation of the router's on-chain `quote()` (spec 4.3) with any
 * ethers signer whose address the operator has whitelisted. The typed data is the protocol's,
 * the same the services hash.
 */
import type { Signer, TypedDataDomain, TypedDataField } from 'ethers';
import { ammVerificationTypedData, type AmmVerificationParams } from '@pmm/protocol';

const SAMPLE_ADDRESS = '0x' + '0'.repeat(40);

/** The EIP-712 types of the authorisation (without `EIP712Domain`), in ethers' shape. */
export const AMM_VERIFICATION_TYPES: Record<string, TypedDataField[]> = ammVerificationTypedData({
  chainId: 1,
  verifier: SAMPLE_ADDRESS,
  tokenIn: SAMPLE_ADDRESS,
  tokenOut: SAMPLE_ADDRESS,
  timestampInMilisec: 0n,
}).types;

/** The EIP-712 domain of the authorisation on one chain. */
export function ammVerificationDomain(chainId: number, verifier: string): TypedDataDomain {
  return ammVerificationTypedData({
    chainId,
    verifier,
    tokenIn: SAMPLE_ADDRESS,
    tokenOut: SAMPLE_ADDRESS,
    timestampInMilisec: 0n,
  }).domain;
}

/** Signs the quote authorization; returns the 65-byte signature as 0x hex. */
export function signQuoteAuthorization(signer: Signer, p: AmmVerificationParams): Promise<string> {
  const data = ammVerificationTypedData(p);
  return signer.signTypedData(data.domain, data.types, data.message);
}
