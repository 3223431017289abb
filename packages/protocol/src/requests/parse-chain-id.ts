/**
 * `chainId` in a sign body and in the `/v2/price` query (docs/decisions/0003-chainid.md).
 *
 * Parsing and serving are separate steps on purpose: a malformed id is 422 VALIDATION_ERROR,
 * a well-formed id that is not served (however large) is 400 UNSUPPORTED_CHAIN, and between
 * the two sit other checks of the precedence order (unknown fields, other fields).
 */
import { ApiError, validationError } from '../errors/api-error';
import { resolveChainId } from '../chains/chains';

/**
 * What the parsers return for a well-formed id above `Number.MAX_SAFE_INTEGER`. No chain uses
 * such an id, so it is never served; returning a safe integer keeps the invariant that a parsed
 * chain id is a safe integer (usable in Redis keys and logs without exponent notation).
 */
export const OUT_OF_RANGE_CHAIN_ID = Number.MAX_SAFE_INTEGER;

/** The reason for a negative body `chainId`; the JSON schema reports its `minimum` with it too. */
export const CHAIN_ID_NEGATIVE_REASON = 'must be a non-negative integer';

/**
 * Parses `chainId` from a JSON body: a JSON integer ≥ 0; omitted or `0` resolve to 8453.
 * Does not check that the chain is served (see {@link assertServedChain}).
 *
 * A JSON number such as `1.0` or `1e3` is integral after parsing and is accepted: JSON has no
 * separate integer type. `Infinity` (from a literal like `1e400`) is not an integer.
 *
 * @throws ApiError VALIDATION_ERROR `chainId: <reason>` for a non-number, a fractional or a
 *   negative number
 */
export function chainIdFromBody(value: unknown): number {
  if (value === undefined) return resolveChainId(undefined);
  if (typeof value !== 'number' || !Number.isInteger(value)) throw validationError('chainId', 'must be an integer');
  if (value < 0) throw validationError('chainId', CHAIN_ID_NEGATIVE_REASON);
  return resolveChainId(Number.isSafeInteger(value) ? value : OUT_OF_RANGE_CHAIN_ID);
}

const DIGITS_RE = /^[0-9]+$/;

/**
 * Parses `chainId` from a query string: at most one value of ASCII digits only (leading zeros
 * allowed: `007` is 7); omitted or `0` resolve to 8453. Does not check that the chain is served.
 *
 * Takes `unknown` so that any query parser's output can be passed (a string, an array for a
 * repeated parameter, an object for bracket syntax).
 *
 * @throws ApiError VALIDATION_ERROR `chainId: <reason>` for an empty value, any non-digit
 *   (sign, space, letter, dot), a repeated parameter, or a non-string
 */
export function chainIdFromQuery(raw: unknown): number {
  if (raw === undefined) return resolveChainId(undefined);
  if (Array.isArray(raw)) throw validationError('chainId', 'must be given at most once');
  if (typeof raw !== 'string') throw validationError('chainId', 'must be a base-10 unsigned integer');
  if (raw === '') throw validationError('chainId', 'must not be empty');
  if (!DIGITS_RE.test(raw)) throw validationError('chainId', 'must be a base-10 unsigned integer (ASCII digits only)');
  const digits = raw.replace(/^0+(?=.)/, '');
  // More than 16 digits is above MAX_SAFE_INTEGER (16 digits); checking the length first means
  // that a 10 000-digit value never reaches Number() and never throws.
  if (digits.length > 16) return OUT_OF_RANGE_CHAIN_ID;
  const value = Number(digits);
  return resolveChainId(Number.isSafeInteger(value) ? value : OUT_OF_RANGE_CHAIN_ID);
}

/**
 * Throws unless `chainId` (already resolved, so never 0) is one of the served chains.
 *
 * @throws ApiError UNSUPPORTED_CHAIN, e.g. `chainId: 1 is not served (served: 8453, 56, 4663)`
 */
export function assertServedChain(chainId: number, served: readonly number[]): void {
  if (served.includes(chainId)) return;
  const list = served.length > 0 ? served.join(', ') : 'none';
  const what = chainId === OUT_OF_RANGE_CHAIN_ID ? 'too large,' : `${chainId} is`;
  throw new ApiError('UNSUPPORTED_CHAIN', `chainId: ${what} not served (served: ${list})`);
}
