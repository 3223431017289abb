/**
 * How a token's `symbol()` and `decimals()` answers are read (core's token-metadata.ts), on
 * answers encoded by viem (an ABI implementation independent of the ethers one it uses).
 */
import { encodeFunctionResult, parseAbi, stringToHex } from 'viem';
import { DECIMALS_CALLDATA, SYMBOL_CALLDATA, decodeTokenDecimals, decodeTokenSymbol } from '@pmm/core';

const erc20 = parseAbi(['function decimals() view returns (uint8)', 'function symbol() view returns (string)']);
const bytes32Symbol = parseAbi(['function symbol() view returns (bytes32)']);

describe('token metadata', () => {
  it('default: the calldata are the ERC-20 selectors of decimals() and symbol()', () => {
    expect(DECIMALS_CALLDATA).toBe('0x313ce567');
    expect(SYMBOL_CALLDATA).toBe('0x95d89b41');
  });

  it('behavior: a string symbol is read as is, including non-ASCII', () => {
    for (const symbol of ['USDC', 'WETH.e', 'Ξ', ''])
      expect(decodeTokenSymbol(encodeFunctionResult({ abi: erc20, functionName: 'symbol', result: symbol }))).toBe(
        symbol,
      );
  });

  it('behavior: a bytes32 symbol (MKR, SAI) is read as ASCII without its zero padding', () => {
    const data = encodeFunctionResult({
      abi: bytes32Symbol,
      functionName: 'symbol',
      result: stringToHex('MKR', { size: 32 }),
    });
    expect(decodeTokenSymbol(data)).toBe('MKR');
  });

  it('error: an answer that is neither a string nor a bytes32 is undefined, not a throw', () => {
    expect(decodeTokenSymbol('0x')).toBeUndefined();
    expect(decodeTokenSymbol('0x1234')).toBeUndefined();
  });

  it('boundary: decimals 0 and 77 are read; 78 and above (no uint256 power of ten) are undefined', () => {
    const answer = (d: number) => encodeFunctionResult({ abi: erc20, functionName: 'decimals', result: d });
    expect(decodeTokenDecimals(answer(0))).toBe(0);
    expect(decodeTokenDecimals(answer(6))).toBe(6);
    expect(decodeTokenDecimals(answer(77))).toBe(77);
    expect(decodeTokenDecimals(answer(78))).toBeUndefined();
    expect(decodeTokenDecimals(answer(255))).toBeUndefined();
    expect(decodeTokenDecimals('0x')).toBeUndefined();
    // A word above uint8 is not a uint8 answer.
    expect(decodeTokenDecimals('0x' + '00'.repeat(30) + '0100')).toBeUndefined();
  });
});
