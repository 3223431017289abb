/**
 * EVM address validation for request fields (docs/decisions/0004-addresses.md).
 */
import { toChecksumAddress } from '../abi/eip55';
import { validationError } from '../errors/api-error';

/**
 * The wire format of an address: `0x` (lowercase prefix) and 40 hex digits. The JSON schemas
 * use this pattern too, so that the schema and the parser cannot disagree on the shape.
 */
export const ADDRESS_PATTERN = '^0x[0-9a-fA-F]{40}$';

/** The reason given when a value does not have the address shape. */
export const ADDRESS_FORMAT_REASON = 'must be a 0x-prefixed 20-byte hex address';

const ADDRESS_RE = new RegExp(ADDRESS_PATTERN);

/**
 * Whether `value` has the address shape ({@link ADDRESS_PATTERN}); says nothing of the checksum
 * or the zero address ({@link parseAddress} judges those). The one compiled form of the pattern,
 * for every check that only needs the shape.
 */
export function isAddress(value: unknown): value is string {
  return typeof value === 'string' && ADDRESS_RE.test(value);
}

const ZERO_ADDRESS = '0x0000000000000000000000000000000000000000';

/**
 * EIP-55 forms of recently seen addresses, by lowercase hex. Token and user addresses repeat
 * from request to request, and the checksum (a keccak per address, three per sign request)
 * was the largest cost of request validation in the signer's benchmark. Bounded: when full,
 * the oldest entry goes (Map keeps insertion order).
 */
const CHECKSUM_CACHE_SIZE = 10_000;
const checksumCache = new Map<string, string>();

function checksumOf(lowerHex: string): string {
  let checksummed = checksumCache.get(lowerHex);
  if (checksummed === undefined) {
    checksummed = toChecksumAddress(lowerHex);
    if (checksumCache.size >= CHECKSUM_CACHE_SIZE) checksumCache.delete(checksumCache.keys().next().value as string);
    checksumCache.set(lowerHex, checksummed);
  }
  return checksummed;
}

/**
 * Parses an address field and returns its EIP-55 checksummed form.
 *
 * Accepted: all-lowercase hex, all-uppercase hex digits (the `0x` prefix stays lowercase),
 * or mixed case that is a valid EIP-55 checksum. Mixed case is taken as a checksum claim, so a
 * wrong one is rejected rather than silently normalized: it usually means a typo.
 *
 * @param field the JSON field name as the client sent it, used in the message
 * @throws ApiError VALIDATION_ERROR `<field>: <reason>` for a non-string, a wrong shape, a bad
 *   checksum, or the zero address
 */
export function parseAddress(field: string, value: unknown): string {
  if (typeof value !== 'string') throw validationError(field, 'must be a string');
  if (!isAddress(value)) throw validationError(field, ADDRESS_FORMAT_REASON);
  const hex = value.slice(2);
  const checksummed = checksumOf(hex.toLowerCase());
  const singleCase = hex === hex.toLowerCase() || hex === hex.toUpperCase();
  if (!singleCase && value !== checksummed) throw validationError(field, 'invalid checksum');
  if (checksummed === ZERO_ADDRESS) throw validationError(field, 'zero address not allowed');
  return checksummed;
}
