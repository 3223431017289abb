/**
 * The hand-written per-block encodings, checked byte for byte against viem and against ethers'
 * Interface built from the compiled contracts (two independent ABI implementations): quote()
 * calldata, getReserveBalances calldata and result, aggregate3 calldata and results.
 */
import { Interface } from 'ethers';
import fc from 'fast-check';
import { Multicall3Artifact, PmmHelperArtifact, PmmRouterArtifact } from '@pmm/contracts';
import { decodeFunctionResult, encodeFunctionData, encodeFunctionResult, parseAbi, type Hex } from 'viem';
import {
  AGGREGATE3_SELECTOR,
  RESERVE_BALANCES_SELECTOR,
  decodeAggregate3,
  decodeUint256Array,
  decodeUintResult,
  encodeAggregate3,
  reserveBalancesCalldata,
} from '../../src/chain/call-codec';
import { isHexBytes } from '@pmm/core';
import { QUOTE_SELECTOR, quoteCalldataBuilder, uint256WordHex } from '@pmm/protocol';

const routerAbi = parseAbi([
  'function quote(address tokenIn, uint256 amountIn, address tokenOut, uint256 timestampInMilisec, bytes sig) view returns (uint256)',
]);
const helperAbi = parseAbi(['function getReserveBalances(address[] tokens) view returns (uint256[] balances)']);
const multicallAbi = parseAbi([
  'struct Call3 { address target; bool allowFailure; bytes callData; }',
  'struct Result { bool success; bytes returnData; }',
  'function aggregate3(Call3[] calls) payable returns (Result[] returnData)',
]);

const ethersRouter = new Interface(PmmRouterArtifact.abi);
const ethersHelper = new Interface(PmmHelperArtifact.abi);
const ethersMulticall = new Interface(Multicall3Artifact.abi);

const address = fc
  .uint8Array({ minLength: 20, maxLength: 20 })
  .map((b) => `0x${Buffer.from(b).toString('hex')}` as Hex);
const bytes = (max: number) =>
  fc.uint8Array({ maxLength: max }).map((b) => `0x${Buffer.from(b).toString('hex')}` as Hex);
const uint256 = fc.bigInt({ min: 0n, max: (1n << 256n) - 1n });

describe('call codec', () => {
  it('default: selectors are those of quote() and aggregate3()', () => {
    expect('0x' + QUOTE_SELECTOR).toBe(
      encodeFunctionData({
        abi: routerAbi,
        functionName: 'quote',
        args: [('0x' + '00'.repeat(20)) as Hex, 0n, ('0x' + '00'.repeat(20)) as Hex, 0n, '0x'],
      }).slice(0, 10),
    );
    expect('0x' + AGGREGATE3_SELECTOR).toBe(
      encodeFunctionData({ abi: multicallAbi, functionName: 'aggregate3', args: [[]] }).slice(0, 10),
    );
  });

  it('behavior: quote() calldata equals viem and ethers for any addresses, amounts, timestamps and 65-byte signatures', () => {
    fc.assert(
      fc.property(
        address,
        address,
        uint256,
        uint256,
        fc.uint8Array({ minLength: 65, maxLength: 65 }),
        (tokenIn, tokenOut, amountIn, ts, sig) => {
          const signature = `0x${Buffer.from(sig).toString('hex')}` as Hex;
          const ours = quoteCalldataBuilder({ tokenIn, tokenOut, timestampInMilisec: ts, signature })(amountIn);
          const theirs = encodeFunctionData({
            abi: routerAbi,
            functionName: 'quote',
            args: [tokenIn, amountIn, tokenOut, ts, signature],
          });
          expect(ours).toBe(theirs);
          expect(ours).toBe(ethersRouter.encodeFunctionData('quote', [tokenIn, amountIn, tokenOut, ts, signature]));
        },
      ),
      { numRuns: 200 },
    );
  });

  it('behavior: aggregate3 calldata equals viem and ethers (allowFailure true), including empty and odd-length call data', () => {
    fc.assert(
      fc.property(fc.array(fc.record({ target: address, data: bytes(200) }), { maxLength: 12 }), (calls) => {
        const ours = encodeAggregate3(calls);
        const theirs = encodeFunctionData({
          abi: multicallAbi,
          functionName: 'aggregate3',
          args: [calls.map((c) => ({ target: c.target, allowFailure: true, callData: c.data }))],
        });
        expect(ours).toBe(theirs);
        expect(ours).toBe(
          ethersMulticall.encodeFunctionData('aggregate3', [calls.map((c) => [c.target, true, c.data])]),
        );
      }),
      { numRuns: 200 },
    );
  });

  it('behavior: aggregate3 results encoded by viem (and ethers) decode to the same successes and data', () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ success: fc.boolean(), returnData: bytes(100) }), { maxLength: 12 }),
        (results) => {
          const encoded = encodeFunctionResult({ abi: multicallAbi, functionName: 'aggregate3', result: results });
          expect(decodeAggregate3(encoded, results.length)).toEqual(
            results.map((r) => ({ success: r.success, data: r.returnData })),
          );
          expect(
            ethersMulticall.encodeFunctionResult('aggregate3', [results.map((r) => [r.success, r.returnData])]),
          ).toBe(encoded);
          // And viem agrees on the round trip it produced.
          expect(decodeFunctionResult({ abi: multicallAbi, functionName: 'aggregate3', data: encoded })).toEqual(
            results,
          );
        },
      ),
      { numRuns: 200 },
    );
  });

  it('error: truncated aggregate3 results throw instead of returning a partial list', () => {
    const encoded = encodeFunctionResult({
      abi: multicallAbi,
      functionName: 'aggregate3',
      result: [
        { success: true, returnData: `0x${'11'.repeat(32)}` },
        { success: true, returnData: `0x${'22'.repeat(64)}` },
      ],
    });
    for (const cut of [10, 66, 130, encoded.length - 64])
      expect(() => decodeAggregate3(encoded.slice(0, cut), 2)).toThrow(/abi decode|hex/);
    expect(() => decodeAggregate3('0x' + 'ff'.repeat(32), 2)).toThrow(/too large/);
  });

  it('error: a result count the data cannot hold, or other than the calls sent, throws before anything is allocated', () => {
    // Offset 0x20, then a count of 30 million: the old decoder allocated an array of that size first.
    const huge = '0x' + uint256WordHex(0x20) + uint256WordHex(30_000_000);
    expect(() => decodeAggregate3(huge, 30_000_000)).toThrow(/out of bounds/);
    expect(() => decodeAggregate3(huge, 2)).toThrow(/30000000 results for 2 calls/);
  });

  it('behavior: the hex check of an answer is linear: a 10 MiB answer does not overflow the stack', () => {
    const big = '0x' + 'ab'.repeat(5 * 1_048_576);
    expect(isHexBytes(big)).toBe(true);
    expect(isHexBytes(big + 'a')).toBe(false);
    expect(isHexBytes('0x' + 'zz')).toBe(false);
    expect(isHexBytes(null)).toBe(false);
  });

  it("default: the getReserveBalances selector is the helper contract's", () => {
    expect('0x' + RESERVE_BALANCES_SELECTOR).toBe(ethersHelper.getFunction('getReserveBalances')!.selector);
  });

  it('behavior: getReserveBalances calldata equals ethers and viem for any token list', () => {
    fc.assert(
      fc.property(fc.array(address, { maxLength: 60 }), (tokens) => {
        const ours = reserveBalancesCalldata(tokens);
        expect(ours).toBe(ethersHelper.encodeFunctionData('getReserveBalances', [tokens]));
        expect(ours).toBe(encodeFunctionData({ abi: helperAbi, functionName: 'getReserveBalances', args: [tokens] }));
      }),
      { numRuns: 200 },
    );
  });

  it('behavior: getReserveBalances results encoded by ethers (and viem) decode to the same balances', () => {
    fc.assert(
      fc.property(fc.array(uint256, { maxLength: 60 }), (balances) => {
        const encoded = ethersHelper.encodeFunctionResult('getReserveBalances', [balances]);
        expect(encoded).toBe(
          encodeFunctionResult({ abi: helperAbi, functionName: 'getReserveBalances', result: balances }),
        );
        expect(decodeUint256Array(encoded)).toEqual(balances);
      }),
      { numRuns: 200 },
    );
  });

  it('error: truncated or malformed getReserveBalances results throw instead of returning a partial list', () => {
    const encoded = ethersHelper.encodeFunctionResult('getReserveBalances', [[1n, 2n, 3n]]);
    for (const cut of [2, 66, 130, encoded.length - 64])
      expect(() => decodeUint256Array(encoded.slice(0, cut))).toThrow(/abi decode/);
    expect(() => decodeUint256Array('0x' + 'ff'.repeat(64))).toThrow(/too large/);
    expect(() => decodeUint256Array('0xzz')).toThrow(/hex/);
  });

  it('behavior: a uint result is read only from a successful one-word answer', () => {
    expect(decodeUintResult({ success: true, data: `0x${'00'.repeat(31)}2a` })).toBe(42n);
    expect(decodeUintResult({ success: false, data: `0x${'00'.repeat(31)}2a` })).toBeUndefined();
    expect(decodeUintResult({ success: true, data: '0x' })).toBeUndefined();
    expect(decodeUintResult({ success: true, data: `0x${'00'.repeat(64)}` })).toBeUndefined();
  });
});
