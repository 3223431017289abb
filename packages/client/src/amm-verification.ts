/**
 * EIP-712 typed data for the router's on-chain `quote()` (spec 4.3), and a helper that signs
 * it with any ethers signer whose address the operator has whitelisted.
 */
import type { Signer, TypedDataDomain, TypedDataField } from 'ethers';

export const AMM_VERIFICATION_TYPES: Record<string, TypedDataField[]> = {
  AmmVerification: [
    { name: 'tokenIn', type: 'address' },
    { name: 'tokenOut', type: 'address' },
    { name: 'timestampInMilisec', type: 'uint256' },
  ],
};

export interface AmmVerificationParams {
  chainId: number;
  /** The verifier contract; the same address on every chain. */
  verifier: string;
  tokenIn: string;
  tokenOut: string;
  /** Current time in ms; must be within 10 s of the block the quote runs in. */
  timestampInMilisec: bigint;
}

export function ammVerificationDomain(chainId: number, verifier: string): TypedDataDomain {
  return { name: 'VerificationImpl', version: '1', chainId, verifyingContract: verifier };
}

/** Signs the quote authorization; returns the 65-byte signature as 0x hex. */
export function signQuoteAuthorization(signer: Signer, p: AmmVerificationParams): Promise<string> {
  return signer.signTypedData(ammVerificationDomain(p.chainId, p.verifier), AMM_VERIFICATION_TYPES, {
    tokenIn: p.tokenIn,
    tokenOut: p.tokenOut,
    timestampInMilisec: p.timestampInMilisec,
  });
}
