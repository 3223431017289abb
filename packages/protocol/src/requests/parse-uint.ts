/**
 * Canonical unsigned integer strings for amounts and fees (docs/decisions/0005-fee.md and
 * docs/decisions/0006-amountin-and-minamountout.md).
 */
import { validationError } from '../errors/api-error';

/** 2^256 - 1, the largest value of a Solidity `uint256`. */
export const UINT256_MAX = (1n << 256n) - 1n;

/**
 * The wire format of an unsigned integer string: `0`, or digits without a leading zero. The
 * JSON schemas use this pattern too. Anchors are exact: JavaScript's `$` without the `m` flag
 * does not match before a trailing newline.
 */
export const UINT_STRING_PATTERN = '^(0|[1-9][0-9]*)$';

/** The reason given when a value does not have the canonical shape. */
export const UINT_FORMAT_REASON = 'must be a canonical base-10 integer string (digits only, no sign, no leading zeros)';

const UINT_RE = new RegExp(UINT_STRING_PATTERN);

/** True for a canonical decimal string of a uint256 (stored overrides, CLI arguments). */
export function isUint256String(value: unknown): value is string {
  return typeof value === 'string' && UINT_RE.test(value) && BigInt(value) <= UINT256_MAX;
}

/** A bound as shown in messages: `2^256-1` reads better than its 78 digits. */
function formatBound(value: bigint): string {
  return value === UINT256_MAX ? '2^256-1' : value.toString();
}

const digitCache = new Map<bigint, number>();
function digitsOf(bound: bigint): number {
  let n = digitCache.get(bound);
  if (n === undefined) {
    n = bound.toString().length;
    if (digitCache.size < 64) digitCache.set(bound, n);
  }
  return n;
}

/**
 * Parses a canonical base-10 unsigned integer string within `[min, max]`.
 *
 * Only strings are accepted (a JSON number loses precision above 2^53, so amounts never come
 * as numbers). No sign, no spaces, no exponent, no leading zeros except `0` itself: one value
 * has exactly one spelling, which keeps signed payloads and logs unambiguous.
 *
 * @throws ApiError VALIDATION_ERROR `<field>: <reason>`; an out-of-range value names the range
 */
export function parseUintString(field: string, value: unknown, range: { min: bigint; max: bigint }): bigint {
  if (typeof value !== 'string') throw validationError(field, 'must be a string');
  if (!UINT_RE.test(value)) throw validationError(field, UINT_FORMAT_REASON);
  // Built only when thrown: this runs several times per sign request (the hot path).
  const outOfRange = () =>
    validationError(field, `must be between ${formatBound(range.min)} and ${formatBound(range.max)}`);
  // A canonical string longer than the bound's digits is larger than the bound: answer without
  // converting it, so that a long string costs nothing beyond the regex.
  if (value.length > digitsOf(range.max)) throw outOfRange();
  const parsed = BigInt(value);
  if (parsed < range.min || parsed > range.max) throw outOfRange();
  return parsed;
}
