/**
 * The whole signing step of `/v2/swap/sign`: digest, signature, verificationData.
 * Timing this function measures encode + hash + sign + encode; its parts
 * ({@link swapDigest}, {@link DigestSigner.sign}, {@link encodeVerificationData}) can be timed apart.
 */
import { bytesToHex } from './abi-words';
import { ApiError } from './errors';
import type { DigestSigner } from './digest-signer';
import { swapDigest, type SwapQuoteFields } from './swap-digest';
import { encodeVerificationData } from './verification-data';

/** What the API returns for a signed quote, all `0x` hex. */
export interface SignedSwapQuote {
  /** The 32-byte digest that was signed. */
  digest: string;
  /** 65 bytes r ‖ s ‖ v, low-s, v ∈ {27, 28}. */
  signature: string;
  /** `abi.encode(fee, originRate, userAddress, signature)`, for the router's `swap`. */
  verificationData: string;
}

/**
 * Signs a swap quote. Throws an {@link ApiError} `ENCODING_FAILED` when a field cannot be
 * encoded (out of range, malformed address) and `SIGNING_FAILED` when the signer fails.
 * The inner messages never carry input values or keys, and the 5xx renderer replaces them
 * with generic text anyway; they are kept for the server log.
 */
export function signSwapQuote(signer: DigestSigner, f: SwapQuoteFields): SignedSwapQuote {
  let digest: Uint8Array;
  try {
    digest = swapDigest(f);
  } catch (err) {
    throw new ApiError('ENCODING_FAILED', `encoding failed: ${messageOf(err)}`, {}, { cause: err });
  }
  let signature: Uint8Array;
  try {
    signature = signer.sign(digest);
  } catch (err) {
    throw new ApiError('SIGNING_FAILED', `signing failed: ${messageOf(err)}`, {}, { cause: err });
  }
  let verificationData: string;
  try {
    verificationData = encodeVerificationData(f.fee, f.originRate, f.userAddress, signature);
  } catch (err) {
    throw new ApiError('ENCODING_FAILED', `encoding failed: ${messageOf(err)}`, {}, { cause: err });
  }
  return { digest: bytesToHex(digest), signature: bytesToHex(signature), verificationData };
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : 'unknown error';
}
