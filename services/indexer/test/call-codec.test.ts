/**
 * The hand-written per-block encodings, checked byte for byte against viem (an independent
 * ABI implementation): quote() calldata, aggregate3 calldata, aggregate3 results.
 */
import fc from 'fast-check';
import { decodeFunctionResult, encodeFunctionData, encodeFunctionResult, parseAbi, type Hex } from 'viem';
import {
  AGGREGATE3_SELECTOR,
  QUOTE_SELECTOR,
  decodeAggregate3,
  decodeUintResult,
  encodeAggregate3,
  quoteCalldataBuilder,
} from '../src/chain/call-codec';

const routerAbi = parseAbi([
  'function quote(address tokenIn, uint256 amountIn, address tokenOut, uint256 timestampInMilisec, bytes sig) view returns (uint256)',
]);
const multicallAbi = parseAbi([
  'struct Call3 { address target; bool allowFailure; bytes callData; }',
  'struct Result { bool success; bytes returnData; }',
  'function aggregate3(Call3[] calls) payable returns (Result[] returnData)',
]);

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

  it('behavior: quote() calldata equals viem for any addresses, amounts, timestamps and 65-byte signatures', () => {
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
        },
      ),
      { numRuns: 200 },
    );
  });

  it('behavior: aggregate3 calldata equals viem (allowFailure true), including empty and odd-length call data', () => {
    fc.assert(
      fc.property(fc.array(fc.record({ target: address, data: bytes(200) }), { maxLength: 12 }), (calls) => {
        const ours = encodeAggregate3(calls);
        const theirs = encodeFunctionData({
          abi: multicallAbi,
          functionName: 'aggregate3',
          args: [calls.map((c) => ({ target: c.target, allowFailure: true, callData: c.data }))],
        });
        expect(ours).toBe(theirs);
      }),
      { numRuns: 200 },
    );
  });

  it('behavior: aggregate3 results encoded by viem decode to the same successes and data', () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ success: fc.boolean(), returnData: bytes(100) }), { maxLength: 12 }),
        (results) => {
          const encoded = encodeFunctionResult({ abi: multicallAbi, functionName: 'aggregate3', result: results });
          expect(decodeAggregate3(encoded)).toEqual(results.map((r) => ({ success: r.success, data: r.returnData })));
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
      expect(() => decodeAggregate3(encoded.slice(0, cut))).toThrow(/abi decode|hex/);
    expect(() => decodeAggregate3('0x' + 'ff'.repeat(32))).toThrow(/too large/);
  });

  it('behavior: a uint result is read only from a successful one-word answer', () => {
    expect(decodeUintResult({ success: true, data: `0x${'00'.repeat(31)}2a` })).toBe(42n);
    expect(decodeUintResult({ success: false, data: `0x${'00'.repeat(31)}2a` })).toBeUndefined();
    expect(decodeUintResult({ success: true, data: '0x' })).toBeUndefined();
    expect(decodeUintResult({ success: true, data: `0x${'00'.repeat(64)}` })).toBeUndefined();
  });
});
