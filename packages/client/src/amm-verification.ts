/**
 * Signs the EIP-712 authorisation of the router's on-chain `quote()` (spec 4.3) with any
 * account whose address the operator has whitelisted: an ethers Signer, a viem WalletClient or
 * a viem local account. The typed data is the protocol's, the same the services hash.
 */
import type { TypedDataField } from 'ethers';
import { ammVerificationTypedData, ammVerificationTypes, type AmmVerificationParams } from '@pmm/protocol';
import { signTypedDataWith, type TypedDataWallet } from './wallet';

export { ammVerificationDomain } from '@pmm/protocol';

/** The EIP-712 types of the authorisation (without `EIP712Domain`), in ethers' shape. */
export const AMM_VERIFICATION_TYPES: Record<string, TypedDataField[]> = ammVerificationTypes();

/** Signs the quote authorization; returns the 65-byte signature as 0x hex. */
export function signQuoteAuthorization(wallet: TypedDataWallet, p: AmmVerificationParams): Promise<string> {
  return signTypedDataWith(wallet, ammVerificationTypedData(p));
}
