/**
 * @pmm/protocol: what the services and the SDK share about the wire and the chain: chains,
 * wire types, request parsing and validation, error codes and the envelope, ABI encoding,
 * EIP-712 digests, orderbook math, the integrator record. Dependency-light on purpose (no
 * Express, Redis, logging, metrics or native modules), so that the SDK can depend on it.
 */
export {
  addressWordHex,
  bareHex,
  bytesToHex,
  functionSelector,
  hexToBytes,
  paddedLength,
  padHexToWords,
  uint256WordHex,
  writeAddressWord,
  writeLengthWord,
  writeUint256Word,
} from './abi-words';
export {
  ammVerificationDomain,
  ammVerificationTypedData,
  ammVerificationTypes,
  type AmmVerificationParams,
  type AmmVerificationTypedData,
  type AmmVerificationTypes,
} from './amm-verification-typed-data';
export { ammVerificationDigest, ammVerificationDomainSeparator, signAmmVerification } from './amm-verification';
export { CHAINS, DEFAULT_CHAIN_ID, findChain, KNOWN_CHAIN_IDS, type ChainContracts, type ChainInfo } from './chains';
export {
  compareDecimals,
  formatRatio,
  formatUnits,
  parseDecimal,
  parseUnits,
  roundSignificant,
  scaleRatio,
  type ScaledDecimal,
} from './decimal';
export {
  type DigestSigner,
  type KeyBackend,
  type KeySigner,
  KeyUnavailableError,
  type SignerBackend,
} from './digest-signer';
export { toChecksumAddress } from './eip55';
export {
  ApiError,
  ERROR_CODES,
  ERROR_STATUS,
  SERVICE_UNAVAILABLE_RETRY_AFTER_SECONDS,
  toErrorEnvelope,
  validationError,
  type ErrorCode,
  type ErrorEnvelope,
} from './errors';
export {
  API_KEY_HEADER,
  API_KEY_ID_HEADER,
  INTEGRATOR_ID_HEADER,
  INTERNAL_TOKEN_HEADER,
  INTERNAL_TOKEN_SCHEME,
  isRequestId,
  isSafeToken,
  REQUEST_ID_HEADER,
  REQUEST_ID_PATTERN,
  SERVICE_REQUEST_ID_HEADER,
  SIGNER_ACCESS_PATH,
  v1DeprecationHeaders,
} from './headers';
export { BODY_ENCODINGS, bodyEncoding, type BodyEncoding } from './body-encoding';
export {
  apiKeyRecordProblems,
  INTEGRATOR_ID_PATTERN,
  integratorRecordProblems,
  isIntegratorId,
  isKeyId,
  KEY_ID_PATTERN,
  MalformedIntegratorError,
  MAX_INTEGRATOR_NAME_LENGTH,
  parseIntegratorRecord,
  type ApiKeyRecord,
  type IntegratorRecord,
} from './integrator';
export { findDuplicateKey } from './json-duplicate-key';
export { keccak256 } from './keccak256';
export { type OrderbookLevel, type OrderbookResponse, type PairOrderbook } from './orderbook';
export {
  levelsFromSamples,
  summarizeLevels,
  type BookSide,
  type LevelOptions,
  type LevelsSummary,
  type QuoteSample,
} from './orderbook-levels';
export { isTokenDecimals, MAX_TOKEN_DECIMALS, type PairRegistry, type TokenInfo } from './pair-registry';
export { isAddress, parseAddress } from './parse-address';
export { assertServedChain, chainIdFromBody, chainIdFromQuery, OUT_OF_RANGE_CHAIN_ID } from './parse-chain-id';
export { DEFAULT_MAX_FEE, FEE_DENOMINATOR, parseFee } from './parse-fee';
export { isUint256String, parseUintString, UINT256_MAX } from './parse-uint';
export { parseSignRequest, SIGN_REQUEST_SCHEMA, type ParsedSignRequest, type SignRequestOptions } from './sign-request';
export { BPS_DENOMINATOR, MAX_SLIPPAGE_BPS, netOfFee, slippageMinimum } from './firm-quote';
export { QUOTE_SELECTOR, quoteCalldataBuilder } from './quote-calldata';
export { signSwapQuote, type SignedSwapQuote } from './sign-swap-quote';
export { type LegacySignSwapResponse, type SignSwapRequest, type SignSwapResponse } from './sign-wire';
export {
  decodeSwapCalldata,
  encodeSwapCalldata,
  SWAP_SELECTOR,
  SWAP_SIGNATURE,
  type SwapCallArgs,
} from './swap-calldata';
export { encodeSwapDigestPreimage, SWAP_DIGEST_PREIMAGE_BYTES, swapDigest, type SwapQuoteFields } from './swap-digest';
export {
  errorEnvelopeSchema,
  ORDERBOOK_LEVEL_SCHEMA,
  ORDERBOOK_RESPONSE_SCHEMA,
  PAIR_ORDERBOOK_SCHEMA,
  SIGN_RESPONSE_SCHEMA,
  V1_ORDERBOOK_RESPONSE_SCHEMA,
  V1_SIGN_REQUEST_SCHEMA,
  V1_SIGN_RESPONSE_SCHEMA,
} from './wire-schemas';
export { decodeVerificationData, encodeVerificationData, type VerificationData } from './verification-data';
