/**
 * Why a call of the router's `swap` reverted, read from its revert data: the reference router's
 * custom errors (packages/contracts, PmmRouter.sol and SignatureRecovery.sol), the token errors a
 * failed `transferFrom` bubbles up through it (the reference TestToken's, and OpenZeppelin's
 * ERC-6093 names most tokens use), Solidity's `Error(string)` and `Panic(uint256)`. Anything else
 * is `Unknown` with its selector; no data at all (out of gas, a bare `revert()`) is `NoData`.
 *
 * Every argument of these errors is a static word (an address or a uint256), so the decoder reads
 * fixed words and never trusts a length from the data, except `Error(string)`'s, bounded by it.
 */
import { WORD_BYTES, bytesToHex, functionSelector, hexToBytes } from './abi-words';

export interface RouterRevert {
  /** The error's name (`QuoteExpired`), or `Error`, `Panic`, `Unknown`, `NoData`. */
  reason: string;
  /** Its arguments by name, as decimal strings (uint256) or lowercase addresses; `message` for `Error`. */
  args: Record<string, string>;
}

interface ErrorShape {
  name: string;
  /** Argument names and types, in order. */
  params: readonly (readonly [string, 'address' | 'uint256'])[];
}

const u = (name: string) => [name, 'uint256'] as const;
const a = (name: string) => [name, 'address'] as const;

/** The router's swap errors and the token errors that reach it, as declared in the contracts. */
const SHAPES: readonly ErrorShape[] = [
  { name: 'WrongSender', params: [a('sender'), a('userAddress')] },
  { name: 'InvalidSignature', params: [] },
  { name: 'QuoteFromFuture', params: [u('quoteTimestamp'), u('blockTimestamp')] },
  { name: 'QuoteExpired', params: [u('quoteTimestamp'), u('blockTimestamp')] },
  { name: 'FeeTooHigh', params: [u('fee')] },
  { name: 'InsufficientOutput', params: [u('amountOut'), u('minOutAmount')] },
  { name: 'PairNotListed', params: [a('tokenIn'), a('tokenOut')] },
  { name: 'DepthExceeded', params: [] },
  { name: 'InsufficientReserve', params: [u('amountOut'), u('reserve')] },
  { name: 'ZeroAmount', params: [] },
  { name: 'TransferFailed', params: [] },
  { name: 'InsufficientBalance', params: [a('account'), u('balance'), u('needed')] },
  { name: 'InsufficientAllowance', params: [a('spender'), u('allowance'), u('needed')] },
  { name: 'ERC20InsufficientBalance', params: [a('sender'), u('balance'), u('needed')] },
  { name: 'ERC20InsufficientAllowance', params: [a('spender'), u('allowance'), u('needed')] },
  { name: 'Panic', params: [u('code')] },
];

const signatureOf = (s: ErrorShape) => `${s.name}(${s.params.map(([, type]) => type).join(',')})`;
const BY_SELECTOR = new Map(SHAPES.map((s) => [functionSelector(signatureOf(s)), s]));
const ERROR_STRING_SELECTOR = functionSelector('Error(string)');

/** The names `decodeRouterRevert` can give for the router's own errors (the docs list them). */
export const ROUTER_REVERT_REASONS: readonly string[] = SHAPES.map((s) => s.name);

function word(data: Uint8Array, index: number): bigint | undefined {
  const start = 4 + index * WORD_BYTES;
  if (start + WORD_BYTES > data.length) return undefined;
  return BigInt(bytesToHex(data.subarray(start, start + WORD_BYTES)));
}

function errorString(data: Uint8Array): string | undefined {
  const offset = word(data, 0);
  if (offset === undefined || offset > BigInt(data.length)) return undefined;
  const at = 4 + Number(offset);
  if (at + WORD_BYTES > data.length) return undefined;
  const length = BigInt(bytesToHex(data.subarray(at, at + WORD_BYTES)));
  if (length > BigInt(data.length - at - WORD_BYTES)) return undefined;
  return new TextDecoder('utf-8', { fatal: false }).decode(
    data.subarray(at + WORD_BYTES, at + WORD_BYTES + Number(length)),
  );
}

/** Decodes revert data (`0x` hex); never throws: what cannot be read is `Unknown`. */
export function decodeRouterRevert(hex: string): RouterRevert {
  let data: Uint8Array;
  try {
    data = hexToBytes(hex);
  } catch {
    return { reason: 'Unknown', args: {} };
  }
  if (data.length === 0) return { reason: 'NoData', args: {} };
  if (data.length < 4) return { reason: 'Unknown', args: { data: bytesToHex(data) } };
  const selector = bytesToHex(data.subarray(0, 4));
  if (selector === ERROR_STRING_SELECTOR) {
    const message = errorString(data);
    return message === undefined
      ? { reason: 'Unknown', args: { selector } }
      : { reason: 'Error', args: { message: message.slice(0, 256) } };
  }
  const shape = BY_SELECTOR.get(selector);
  if (!shape) return { reason: 'Unknown', args: { selector } };
  const args: Record<string, string> = {};
  for (const [i, [name, type]] of shape.params.entries()) {
    const w = word(data, i);
    if (w === undefined) return { reason: 'Unknown', args: { selector } };
    args[name] = type === 'address' ? `0x${(w & ((1n << 160n) - 1n)).toString(16).padStart(40, '0')}` : w.toString();
  }
  return { reason: shape.name, args };
}
