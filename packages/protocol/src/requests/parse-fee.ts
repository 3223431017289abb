/**
 * The `fee` field of a sign request (spec 2.2, docs/decisions/0005-fee.md).
 */
import { parseUintString } from './parse-uint';

/** `fee` is in units of 1/100000 of a swap's output (0.1 bps): the router pays `out × (100000 − fee) / 100000`. */
export const FEE_DENOMINATOR = 100_000n;

/** Default upper bound of `fee`: 10000 in units of 0.1 bps is 10%. */
export const DEFAULT_MAX_FEE = 10000n;

/**
 * Parses `fee`: a canonical base-10 string in `0 … maxFee` (units of 0.1 bps).
 *
 * @param maxFee the deployment's limit, default 10000 (10%)
 * @throws ApiError VALIDATION_ERROR `fee: <reason>`
 */
export function parseFee(value: unknown, maxFee: bigint = DEFAULT_MAX_FEE): bigint {
  return parseUintString('fee', value, { min: 0n, max: maxFee });
}
