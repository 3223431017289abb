/**
 * @pmm/protocol: what the services and the SDK share about the wire and the chain: chains,
 * wire types, request parsing and validation, error codes and the envelope, ABI encoding,
 * EIP-712 digests, orderbook math, the integrator record. Dependency-light on purpose (no
 * Express, Redis, logging, metrics or native modules), so that the SDK can depend on it.
 */
// abi/: ABI words and hex, keccak-256, EIP-55 checksums, the router's calldata and verificationData,
// Multicall3 aggregate3
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
} from './abi/abi-words';
export {
  AGGREGATE3_SELECTOR,
  decodeAggregate3,
  encodeAggregate3,
  readAbiSmall,
  type Call,
  type CallResult,
} from './abi/aggregate3';
export { toChecksumAddress } from './abi/eip55';
export { keccak256 } from './abi/keccak256';
export { QUOTE_SELECTOR, quoteCalldataBuilder } from './abi/quote-calldata';
export { decodeRouterRevert, ROUTER_REVERT_REASONS, type RouterRevert } from './abi/router-revert';
export {
  decodeSwapCalldata,
  encodeSwapCalldata,
  SWAP_SELECTOR,
  SWAP_SIGNATURE,
  type SwapCallArgs,
} from './abi/swap-calldata';
export { decodeVerificationData, encodeVerificationData, type VerificationData } from './abi/verification-data';

// chains/: the chain registry and a chain's pair registry
export {
  CHAINS,
  DEFAULT_CHAIN_ID,
  findChain,
  KNOWN_CHAIN_IDS,
  type ChainContracts,
  type ChainInfo,
} from './chains/chains';
export { isTokenDecimals, MAX_TOKEN_DECIMALS, type PairRegistry, type TokenInfo } from './chains/pair-registry';

// errors/: error codes, the error every service throws, the envelope
export { ApiError, SERVICE_UNAVAILABLE_RETRY_AFTER_SECONDS, validationError } from './errors/api-error';
export { ERROR_CODES, ERROR_STATUS, type ErrorCode } from './errors/error-codes';
export { toErrorEnvelope, type ErrorEnvelope } from './errors/error-envelope';

// http/: header names, ids in headers, the Content-Encodings of a body
export { BODY_ENCODINGS, bodyEncoding, type BodyEncoding } from './http/body-encoding';
export {
  API_KEY_HEADER,
  API_KEY_ID_HEADER,
  INTEGRATOR_ID_HEADER,
  INTERNAL_TOKEN_HEADER,
  INTERNAL_TOKEN_SCHEME,
  isRequestId,
  isSafeToken,
  MAX_SIGN_BUDGET_MS,
  parseSignBudget,
  REQUEST_ID_HEADER,
  REQUEST_ID_PATTERN,
  SERVICE_REQUEST_ID_HEADER,
  SIGN_BUDGET_HEADER,
  SIGNER_ACCESS_PATH,
  v1DeprecationHeaders,
} from './http/headers';

// integrators/: the integrator and API key records
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
} from './integrators/integrator';

// orderbook/: the book's shapes and its levels from quote() samples
export { type OrderbookLevel, type OrderbookResponse, type PairOrderbook } from './orderbook/orderbook';
export {
  levelsFromSamples,
  summarizeLevels,
  type BookSide,
  type LevelOptions,
  type LevelsSummary,
  type QuoteSample,
} from './orderbook/orderbook-levels';

// reference/: a pair's reference price (a Chainlink-compatible feed) beside the router's curve
export { feedAnswerFromMidX18, midX18FromFeedAnswer, type ReferenceScale } from './reference/reference-mid';

// requests/: parsing and validation: the sign body and its fields, the fills query, duplicate JSON keys
export {
  FILLS_CURSOR_PATTERN,
  FILLS_MAX_PERIOD_SECONDS,
  FILLS_QUERY_SCHEMA,
  parseFillsQuery,
  type FillsQuery,
} from './requests/fills-query';
export { findDuplicateKey } from './requests/json-duplicate-key';
export { isAddress, parseAddress } from './requests/parse-address';
export { assertServedChain, chainIdFromBody, chainIdFromQuery, OUT_OF_RANGE_CHAIN_ID } from './requests/parse-chain-id';
export { DEFAULT_MAX_FEE, FEE_DENOMINATOR, parseFee } from './requests/parse-fee';
export { isUint256String, parseUintString, UINT256_MAX } from './requests/parse-uint';
export {
  compileSignRequestValidators,
  parseSignRequest,
  SIGN_REQUEST_SCHEMA,
  type ParsedSignRequest,
  type SignRequestOptions,
} from './requests/sign-request';

// signing/: what is signed (the swap digest, the EIP-712 authorisation), by what, and a firm quote's amounts
export { ammVerificationDigest, ammVerificationDomainSeparator, signAmmVerification } from './signing/amm-verification';
export {
  ammVerificationDomain,
  ammVerificationTypedData,
  ammVerificationTypes,
  type AmmVerificationParams,
  type AmmVerificationTypedData,
  type AmmVerificationTypes,
} from './signing/amm-verification-typed-data';
export {
  type DigestSigner,
  type KeyBackend,
  type KeySigner,
  KeyUnavailableError,
  type SignerBackend,
} from './signing/digest-signer';
export { BPS_DENOMINATOR, MAX_SLIPPAGE_BPS, netOfFee, slippageMinimum } from './signing/firm-quote';
export { signSwapQuote, type SignedSwapQuote } from './signing/sign-swap-quote';
export {
  encodeSwapDigestPreimage,
  SWAP_DIGEST_PREIMAGE_BYTES,
  swapDigest,
  type SwapQuoteFields,
} from './signing/swap-digest';

// units/: exact conversions between token amounts and decimal strings
export {
  compareDecimals,
  formatRatio,
  formatUnits,
  parseDecimal,
  parseUnits,
  roundSignificant,
  scaleRatio,
  type ScaledDecimal,
} from './units/decimal';

// wire/: the public bodies' shapes and their JSON schemas
export {
  FILL_FATE_SCHEMA,
  FILLS_RESPONSE_SCHEMA,
  type FillFate,
  type FillFateKind,
  type FillsResponse,
} from './wire/fills-wire';
export { type LegacySignSwapResponse, type SignSwapRequest, type SignSwapResponse } from './wire/sign-wire';
export {
  errorEnvelopeSchema,
  ORDERBOOK_LEVEL_SCHEMA,
  ORDERBOOK_RESPONSE_SCHEMA,
  PAIR_ORDERBOOK_SCHEMA,
  SIGN_RESPONSE_SCHEMA,
  V1_ORDERBOOK_RESPONSE_SCHEMA,
  V1_SIGN_REQUEST_SCHEMA,
  V1_SIGN_RESPONSE_SCHEMA,
} from './wire/wire-schemas';
