/**
 * The whole signing step of `/v2/swap/sign`: digest, signature, verificationData.
 * Timing this function measures encode + hash + sign + encode; its parts
 * ({@link swapDigest}, {@link KeySigner.sign}, {@link encodeVerificationData}) can be timed apart.
 */
import { bytesToHex } from '../abi/abi-words';
import { ApiError } from '../errors/api-error';
import { KeyUnavailableError, type DigestSigner, type KeySigner } from './digest-signer';
import { swapDigest, type SwapQuoteFields } from './swap-digest';
import { encodeVerificationData } from '../abi/verification-data';

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
 * Signs a swap quote: synchronously with a key in memory, as a promise with a key in a
 * hardware module. Throws (or rejects with) an {@link ApiError}: `ENCODING_FAILED` when a
 * field cannot be encoded (out of range, malformed address), `SERVICE_UNAVAILABLE` when the
 * key's module cannot sign for now ({@link KeyUnavailableError}: an outage, retried), and
 * `SIGNING_FAILED` when the signer fails otherwise. The inner messages never carry input
 * values or keys, and the 5xx renderer replaces them with generic text anyway; they are kept
 * for the server log.
 */
export function signSwapQuote(signer: DigestSigner, f: SwapQuoteFields): SignedSwapQuote;
export function signSwapQuote(signer: KeySigner, f: SwapQuoteFields): SignedSwapQuote | Promise<SignedSwapQuote>;
export function signSwapQuote(signer: KeySigner, f: SwapQuoteFields): SignedSwapQuote | Promise<SignedSwapQuote> {
  let digest: Uint8Array;
  try {
    digest = swapDigest(f);
  } catch (err) {
    throw new ApiError('ENCODING_FAILED', `encoding failed: ${messageOf(err)}`, {}, { cause: err });
  }
  let signature: Uint8Array | Promise<Uint8Array>;
  try {
    signature = signer.sign(digest);
  } catch (err) {
    throw signingError(err);
  }
  if (signature instanceof Promise) {
    return signature.then(
      (sig) => finish(f, digest, sig),
      (err: unknown) => {
        throw signingError(err);
      },
    );
  }
  return finish(f, digest, signature);
}

function finish(f: SwapQuoteFields, digest: Uint8Array, signature: Uint8Array): SignedSwapQuote {
  let verificationData: string;
  try {
    verificationData = encodeVerificationData(f.fee, f.originRate, f.userAddress, signature);
  } catch (err) {
    throw new ApiError('ENCODING_FAILED', `encoding failed: ${messageOf(err)}`, {}, { cause: err });
  }
  return { digest: bytesToHex(digest), signature: bytesToHex(signature), verificationData };
}

function signingError(err: unknown): ApiError {
  // The module's own text goes to the signer's log (where it is caught), not to the client.
  if (err instanceof KeyUnavailableError)
    return new ApiError(
      'SERVICE_UNAVAILABLE',
      'the signing key is unavailable for now; retry shortly',
      {},
      { cause: err },
    );
  return new ApiError('SIGNING_FAILED', `signing failed: ${messageOf(err)}`, {}, { cause: err });
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : 'unknown error';
}
