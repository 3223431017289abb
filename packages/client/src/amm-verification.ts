/**
 * Signs the EIP-712 authorisation of the router's on-chain `quote()` (spec 4.3) with any
 * account whose address the operator has whitelisted: an ethers Signer, a viem WalletClient or
 * a viem local account. The typed data is the protocol's, the same the services hash.
 */
import type { TypedDataDomain, TypedDataField } from 'ethers';
import { ammVerificationTypedData, type AmmVerificationParams } from '@pmm/protocol';
import { signTypedDataWith, type TypedDataWallet } from './wallet';

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
export function signQuoteAuthorization(wallet: TypedDataWallet, p: AmmVerificationParams): Promise<string> {
  return signTypedDataWith(wallet, ammVerificationTypedData(p));
}
