/**
 * Exact conversions between integer token amounts and decimal strings. No floating point:
 * every value is a bigint scaled by a power of ten.
 */

/** Throws a RangeError unless `decimals` is a non-negative safe integer (a count of decimal places). */
export function assertDecimals(decimals: number, what: string): void {
  if (!Number.isSafeInteger(decimals) || decimals < 0)
    throw new RangeError(`${what} must be a non-negative integer, got ${decimals}`);
}

/**
 * Formats `value / 10^decimals` as a plain decimal string: no exponent, no trailing zeros in the
 * fraction, no trailing dot, `"0"` for zero, a leading `-` for negative values.
 *
 * @example formatUnits(3000500000n, 6) === "3000.5"
 */
export function formatUnits(value: bigint, decimals: number): string {
  assertDecimals(decimals, 'decimals');
  if (value < 0n) return `-${formatUnits(-value, decimals)}`;
  const digits = value.toString();
  if (decimals === 0) return digits;
  const padded = digits.padStart(decimals + 1, '0');
  const whole = padded.slice(0, padded.length - decimals);
  const fraction = padded.slice(padded.length - decimals).replace(/0+$/, '');
  return fraction === '' ? whole : `${whole}.${fraction}`;
}

const DECIMAL_RE = /^(-?)([0-9]+)(?:\.([0-9]+))?$/;

/**
 * Parses a plain decimal string (as {@link formatUnits} writes it) into an integer scaled by
 * `10^decimals`. Exact: more fractional digits than `decimals` (other than trailing zeros) is
 * an error, never a rounding.
 *
 * @throws RangeError for a malformed string or one that needs more than `decimals` places
 */
export function parseUnits(value: string, decimals: number): bigint {
  assertDecimals(decimals, 'decimals');
  const match = DECIMAL_RE.exec(value);
  if (!match) throw new RangeError(`not a plain decimal string: ${JSON.stringify(value)}`);
  const [, sign = '', whole = '0', rawFraction = ''] = match;
  const fraction = rawFraction.replace(/0+$/, '');
  if (fraction.length > decimals) throw new RangeError(`${value} has more than ${decimals} decimal places`);
  const scaled = BigInt(whole + fraction.padEnd(decimals, '0'));
  return sign === '-' ? -scaled : scaled;
}

/**
 * `numerator / denominator` rounded to `scaleDecimals` places in the given direction (`down`
 * toward zero, `up` away from zero, for the non-negative values this takes), formatted like
 * {@link formatUnits}.
 *
 * @throws RangeError for a negative numerator or a non-positive denominator
 */
export function formatRatio(
  numerator: bigint,
  denominator: bigint,
  scaleDecimals: number,
  rounding: 'down' | 'up',
): string {
  return formatUnits(scaleRatio(numerator, denominator, scaleDecimals, rounding), scaleDecimals);
}

/**
 * `numerator / denominator × 10^scaleDecimals` as an integer, rounded in the given direction:
 * the integer behind {@link formatRatio}'s string (useful for comparing and sorting).
 *
 * @throws RangeError for a negative numerator or a non-positive denominator
 */
export function scaleRatio(
  numerator: bigint,
  denominator: bigint,
  scaleDecimals: number,
  rounding: 'down' | 'up',
): bigint {
  assertDecimals(scaleDecimals, 'scaleDecimals');
  if (denominator <= 0n) throw new RangeError('denominator must be positive');
  if (numerator < 0n) throw new RangeError('numerator must be non-negative');
  const scaled = numerator * 10n ** BigInt(scaleDecimals);
  const quotient = scaled / denominator;
  return rounding === 'up' && quotient * denominator !== scaled ? quotient + 1n : quotient;
}

/** An exact decimal: `units / 10^scale`. */
export interface ScaledDecimal {
  units: bigint;
  scale: number;
}

/** Number of decimal digits of a positive bigint. */
function digitCount(value: bigint): number {
  return value.toString().length;
}

/**
 * `numerator / denominator` rounded to at most `digits` significant digits in the given
 * direction, exactly (no floating point). The result's `scale` is the place of the last kept
 * digit (0 for values of 10^digits or more, whose last digits are then zeros); trailing zeros
 * are kept, as {@link formatUnits} drops them anyway.
 *
 * @example roundSignificant(30015n, 10n, 3, 'up') → { units: 3010n, scale: 0 } (3010; 3001.5 up)
 * @throws RangeError for a negative numerator, a non-positive denominator or digits < 1
 */
export function roundSignificant(
  numerator: bigint,
  denominator: bigint,
  digits: number,
  rounding: 'down' | 'up',
): ScaledDecimal {
  if (!Number.isSafeInteger(digits) || digits < 1)
    throw new RangeError(`digits must be a positive integer, got ${digits}`);
  if (denominator <= 0n) throw new RangeError('denominator must be positive');
  if (numerator < 0n) throw new RangeError('numerator must be non-negative');
  if (numerator === 0n) return { units: 0n, scale: 0 };
  // floor(log10(n / d)): the digit counts give it to within one.
  let magnitude = digitCount(numerator) - digitCount(denominator);
  const pow = (e: number): bigint => 10n ** BigInt(e);
  if (magnitude >= 0 ? numerator < denominator * pow(magnitude) : numerator * pow(-magnitude) < denominator)
    magnitude--;
  const places = digits - 1 - magnitude;
  if (places >= 0) return { units: scaleRatio(numerator, denominator, places, rounding), scale: places };
  const step = pow(-places);
  return { units: scaleRatio(numerator, denominator * step, 0, rounding) * step, scale: 0 };
}

/** `a - b` as a sign (−1, 0, 1), for two exact decimals of any scales. */
export function compareDecimals(a: ScaledDecimal, b: ScaledDecimal): number {
  const scale = Math.max(a.scale, b.scale);
  const left = a.units * 10n ** BigInt(scale - a.scale);
  const right = b.units * 10n ** BigInt(scale - b.scale);
  return left > right ? 1 : left < right ? -1 : 0;
}

/**
 * Parses a plain non-negative decimal string into an exact decimal with just the places it
 * needs (trailing zeros of the fraction dropped).
 *
 * @throws RangeError for a string {@link parseUnits} would not accept
 */
export function parseDecimal(value: string): ScaledDecimal {
  const fraction = /\.([0-9]*?)0*$/.exec(value)?.[1] ?? '';
  return { units: parseUnits(value, fraction.length), scale: fraction.length };
}
