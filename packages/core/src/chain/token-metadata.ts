/**
 * The ERC-20 metadata calls (`decimals()`, `symbol()`) and how their answers are read, for
 * every service that asks a token about itself (the indexer's registry reads, the signer's
 * operator commands). Cold paths, so ethers' Interface does the ABI work
 * (docs/decisions/0060-abi-codecs.md), made on the first answer read: most processes and test
 * files load this module through @pmm/core's index and never read one, and building the
 * interfaces at load brought in the whole of ethers (about 0.1 CPU s each time).
 */
import { Interface } from 'ethers';
import { functionSelector } from '@pmm/protocol';

let interfaces: { erc20: Interface; erc20Bytes32Symbol: Interface } | undefined;
const abi = () =>
  (interfaces ??= {
    // decimals() is a uint8, but read as the whole word: ethers decodes a uint8 by keeping the
    // low byte, so a junk answer of 256 would read as 0 decimals instead of failing.
    erc20: new Interface(['function decimals() view returns (uint256)', 'function symbol() view returns (string)']),
    /** Some old tokens (MKR, SAI) return `symbol()` as bytes32. */
    erc20Bytes32Symbol: new Interface(['function symbol() view returns (bytes32)']),
  });

/** Calldata of `decimals()`. */
export const DECIMALS_CALLDATA = functionSelector('decimals()');
/** Calldata of `symbol()`. */
export const SYMBOL_CALLDATA = functionSelector('symbol()');

/** The answer to `symbol()`: a string, or a bytes32 of ASCII; undefined when it is neither. */
export function decodeTokenSymbol(returnData: string): string | undefined {
  try {
    return String(abi().erc20.decodeFunctionResult('symbol', returnData)[0]);
  } catch {
    try {
      const word = String(abi().erc20Bytes32Symbol.decodeFunctionResult('symbol', returnData)[0]);
      return Buffer.from(word.slice(2), 'hex').toString('latin1').replace(/\0+$/, '');
    } catch {
      return undefined;
    }
  }
}

/** The answer to `decimals()`; undefined unless it is 0 … 77 (10^77 is the largest power of ten in a uint256). */
export function decodeTokenDecimals(returnData: string): number | undefined {
  try {
    const d = Number(abi().erc20.decodeFunctionResult('decimals', returnData)[0]);
    return Number.isSafeInteger(d) && d >= 0 && d <= 77 ? d : undefined;
  } catch {
    return undefined;
  }
}
