/**
 * The SignQuoteRequest body of `POST /v2/swap/sign` (spec 2.1) and of legacy `/v1/swap/sign`,
 * and its validation in the precedence order of docs/decisions/0001-error-precedence.md.
 *
 * The JSON schema below is the one source of the body's shape: one validator per field is
 * compiled from it once, when first used (strict-validator.ts), and parseSignRequest walks the fields in schema
 * order. The body-level keywords (type object, additionalProperties false, required) are
 * implemented by parseSignRequest itself; a test fails if the schema grows one it does not.
 * (ajv's `JSONSchemaType<T>` is not used: it demands `nullable: true` on every optional
 * property, which would accept `"amountIn": null`.)
 */
import type { ValidateFunction } from 'ajv';
import { ApiError, validationError } from '../errors/api-error';
import { ADDRESS_FORMAT_REASON, ADDRESS_PATTERN, parseAddress } from './parse-address';
import { UINT256_MAX, UINT_FORMAT_REASON, UINT_STRING_PATTERN, parseUintString } from './parse-uint';
import { CHAIN_ID_NEGATIVE_REASON, chainIdFromBody } from './parse-chain-id';
import { parseFee } from './parse-fee';
import { propertyValidators } from './strict-validator';
import { DEFAULT_CHAIN_ID } from '../chains/chains';
import { MAX_SLIPPAGE_BPS } from '../signing/firm-quote';

/**
 * JSON schema of SignQuoteRequest. Property order is the order in which parseSignRequest
 * validates the fields (and so which field a 422 names when several are wrong); keep them alike.
 */
export const SIGN_REQUEST_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  properties: {
    chainId: { type: 'integer', minimum: 0 },
    tokenIn: { type: 'string', pattern: ADDRESS_PATTERN },
    tokenOut: { type: 'string', pattern: ADDRESS_PATTERN },
    fee: { type: 'string', pattern: UINT_STRING_PATTERN },
    userAddress: { type: 'string', pattern: ADDRESS_PATTERN },
    amountIn: { type: 'string', pattern: UINT_STRING_PATTERN },
    minAmountOut: { type: 'string', pattern: UINT_STRING_PATTERN },
    slippageBps: { type: 'integer', minimum: 0, maximum: MAX_SLIPPAGE_BPS },
  },
  required: ['tokenIn', 'tokenOut', 'fee', 'userAddress'],
} as const;

type FieldName = keyof (typeof SIGN_REQUEST_SCHEMA)['properties'];

/** A validated sign request: addresses EIP-55 checksummed, numbers as bigint, chain resolved. */
export interface ParsedSignRequest {
  /** Resolved chain id (0 or omitted give 8453); NOT yet checked to be served. */
  chainId: number;
  tokenIn: string;
  tokenOut: string;
  /** Units of 0.1 bps. */
  fee: bigint;
  userAddress: string;
  /** Present if and only if the client sent `amountIn` (then the response carries calldata). */
  amountIn?: bigint;
  /** As sent; default 0. With `slippageBps` the signer derives the calldata's minimum instead. */
  minAmountOut: bigint;
  /**
   * Present only when sent (then `amountIn` is too and `minAmountOut` is not): the calldata's
   * minimum is the firm `amountOut` less this many basis points (firm-quote.ts).
   */
  slippageBps?: number;
}

export interface SignRequestOptions {
  /** Deployment limit of `fee` (units of 0.1 bps). */
  maxFee: bigint;
  /** False on legacy `/v1`, where a `chainId` field is 400 UNSUPPORTED_FIELD. */
  allowChainId: boolean;
  /** False on legacy `/v1` (its interface is frozen), where `slippageBps` is 400 UNSUPPORTED_FIELD. */
  allowSlippageBps: boolean;
}

const REQUIRED: ReadonlySet<string> = new Set(SIGN_REQUEST_SCHEMA.required);

/**
 * One validator per field, so that the first failing field in schema order is reported. (A
 * whole-body validator without allErrors reports all `required` failures before any type
 * failure, whatever the field order.) They answer yes or no about the body as sent (strict-validator.ts).
 */
const validateField = propertyValidators(SIGN_REQUEST_SCHEMA.properties);

/**
 * Compiles every field's validator now. The signer does it at start, so that its first sign does
 * not compile them (about 90 ms) inside that sign's deadline.
 */
export function compileSignRequestValidators(): void {
  for (const name of Object.keys(SIGN_REQUEST_SCHEMA.properties) as FieldName[]) validateField(name);
}

/** The reason for a value that fails its field schema, in the same words as the parsers. */
function schemaReason(name: FieldName, validator: ValidateFunction): string {
  const keyword = validator.errors?.[0]?.keyword;
  const type = SIGN_REQUEST_SCHEMA.properties[name].type;
  if (keyword === 'type') return type === 'integer' ? 'must be an integer' : 'must be a string';
  if (name === 'chainId') return CHAIN_ID_NEGATIVE_REASON;
  if (name === 'slippageBps') return `must be an integer from 0 to ${MAX_SLIPPAGE_BPS} (basis points)`;
  if (name === 'tokenIn' || name === 'tokenOut' || name === 'userAddress') return ADDRESS_FORMAT_REASON;
  return UINT_FORMAT_REASON;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/**
 * Validates a parsed JSON body as a SignQuoteRequest. First failure wins:
 *
 * 1. body not a plain JSON object → 400 INVALID_JSON;
 * 2. the first unknown field in the body's key order → 400 UNSUPPORTED_FIELD
 *    (`chainId` is unknown when `allowChainId` is false);
 * 3. fields in the order chainId, tokenIn, tokenOut, fee, userAddress, amountIn, minAmountOut,
 *    slippageBps: the first that is missing (if required), of the wrong type or shape, or out
 *    of range / bad checksum / zero address → 422 VALIDATION_ERROR `<field>: <reason>`;
 *    `slippageBps` without `amountIn`, or with `minAmountOut` → 422 `slippageBps: …`;
 * 4. tokenIn equal to tokenOut (in any letter case) → 422 `tokenOut: must differ from tokenIn`.
 *
 * `minAmountOut` is validated whenever it is present, even without `amountIn` (where its value
 * is then unused): a malformed value is a client bug worth reporting, and accepting garbage
 * only because it happens to be ignored would make a later change of that rule breaking.
 *
 * Served chains, tracked pairs and the whitelist are checked later by the signer.
 */
export function parseSignRequest(body: unknown, opts: SignRequestOptions): ParsedSignRequest {
  if (!isPlainObject(body)) throw new ApiError('INVALID_JSON', 'request body must be a JSON object');

  for (const key of Object.keys(body)) {
    // Object.hasOwn: inherited names such as `constructor` or `__proto__` are not fields.
    const known = Object.hasOwn(SIGN_REQUEST_SCHEMA.properties, key);
    if (!known) throw new ApiError('UNSUPPORTED_FIELD', `${key}: unsupported field`);
    if (key === 'chainId' && !opts.allowChainId) {
      throw new ApiError('UNSUPPORTED_FIELD', 'chainId: unsupported field (this endpoint serves chain 8453 only)');
    }
    if (key === 'slippageBps' && !opts.allowSlippageBps)
      throw new ApiError('UNSUPPORTED_FIELD', 'slippageBps: unsupported field (on /v2/swap/sign only)');
  }

  // Each field is checked completely (presence, schema shape, then checksum/range) before the
  // next one, so a 422 always names the first bad field in the documented order.
  const field = (name: FieldName): unknown => {
    const value = body[name];
    if (value === undefined) {
      if (REQUIRED.has(name)) throw validationError(name, 'is required');
      return undefined;
    }
    const validator = validateField(name);
    if (!validator(value)) throw validationError(name, schemaReason(name, validator));
    return value;
  };
  const chainId = opts.allowChainId ? chainIdFromBody(field('chainId')) : DEFAULT_CHAIN_ID;
  const tokenIn = parseAddress('tokenIn', field('tokenIn'));
  const tokenOut = parseAddress('tokenOut', field('tokenOut'));
  const fee = parseFee(field('fee'), opts.maxFee);
  const userAddress = parseAddress('userAddress', field('userAddress'));
  const rawAmountIn = field('amountIn');
  const amountIn =
    rawAmountIn === undefined ? undefined : parseUintString('amountIn', rawAmountIn, { min: 1n, max: UINT256_MAX });
  const rawMinAmountOut = field('minAmountOut');
  const minAmountOut =
    rawMinAmountOut === undefined
      ? 0n
      : parseUintString('minAmountOut', rawMinAmountOut, { min: 0n, max: UINT256_MAX });
  const slippageBps = field('slippageBps') as number | undefined;
  if (slippageBps !== undefined) {
    // Without amountIn there is no calldata to protect; with minAmountOut two minimums would compete.
    if (amountIn === undefined) throw validationError('slippageBps', 'only with amountIn');
    if (rawMinAmountOut !== undefined) throw validationError('slippageBps', 'not together with minAmountOut');
  }
  // Checksummed forms are equal exactly when the addresses are equal in any letter case.
  if (tokenIn === tokenOut) throw validationError('tokenOut', 'must differ from tokenIn');

  const parsed: ParsedSignRequest = { chainId, tokenIn, tokenOut, fee, userAddress, minAmountOut };
  if (amountIn !== undefined) parsed.amountIn = amountIn;
  if (slippageBps !== undefined) parsed.slippageBps = slippageBps;
  return parsed;
}
