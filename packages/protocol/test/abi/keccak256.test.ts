import fc from 'fast-check';
import { keccak256 as viemKeccak256, bytesToHex } from 'viem';
import { keccak256 } from '../../src/abi/keccak256';

describe('keccak256', () => {
  it('property: equals viem on 1,000 random inputs of 0..600 bytes (across the 136-byte rate boundary)', () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 0, maxLength: 600 }), (data) => {
        expect(bytesToHex(keccak256(data))).toBe(viemKeccak256(data));
      }),
      { numRuns: 1_000, seed: 20261121 },
    );
  });

  it('default: the empty input has the well-known hash', () => {
    expect(bytesToHex(keccak256(new Uint8Array()))).toBe(
      '0xc5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470',
    );
  });
});
