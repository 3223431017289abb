import fc from 'fast-check';
import { AbiCoder } from 'ethers';
import { encodeAbiParameters, hexToBytes as viemHexToBytes, toFunctionSelector, toHex } from 'viem';
import {
  bytesToHex,
  hexToBytes,
  paddedLength,
  writeAddressWord,
  writeLengthWord,
  writeUint256Word,
  addressWordHex,
  bareHex,
  functionSelector,
  padHexToWords,
  uint256WordHex,
} from '../../src/abi/abi-words';
import { UINT256_MAX } from '../../src/requests/parse-uint';
import { RUNS, addressArb, uint256Arb } from '@pmm/testkit';

const coder = AbiCoder.defaultAbiCoder();

function word(write: (out: Uint8Array) => void): string {
  // Dirty buffer: the writers must overwrite every byte of their slot, not rely on zeros.
  const out = new Uint8Array(96).fill(0xee);
  write(out);
  expect(bytesToHex(out.subarray(0, 32))).toBe(`0x${'ee'.repeat(32)}`);
  expect(bytesToHex(out.subarray(64))).toBe(`0x${'ee'.repeat(32)}`);
  return bytesToHex(out.subarray(32, 64));
}

describe('abi-words', () => {
  it('behavior: writeUint256Word matches ethers and viem on random uint256 (incl. 0 and 2^256-1)', () => {
    fc.assert(
      fc.property(uint256Arb, (value) => {
        const ours = word((out) => writeUint256Word(out, 32, value));
        expect(ours).toBe(coder.encode(['uint256'], [value]));
        expect(ours).toBe(encodeAbiParameters([{ type: 'uint256' }], [value]));
      }),
      RUNS,
    );
  });

  it('behavior: writeAddressWord matches ethers and viem for lowercase, uppercase and checksummed input', () => {
    fc.assert(
      fc.property(addressArb, (address) => {
        const ours = word((out) => writeAddressWord(out, 32, address));
        expect(ours).toBe(coder.encode(['address'], [address.toLowerCase()]));
        expect(ours).toBe(encodeAbiParameters([{ type: 'address' }], [address.toLowerCase() as `0x${string}`]));
      }),
      RUNS,
    );
  });

  it('behavior: writeLengthWord matches viem for safe integers', () => {
    fc.assert(
      fc.property(fc.oneof(fc.constantFrom(0, 255, 256, Number.MAX_SAFE_INTEGER), fc.maxSafeNat()), (n) => {
        expect(word((out) => writeLengthWord(out, 32, n))).toBe(
          encodeAbiParameters([{ type: 'uint256' }], [BigInt(n)]),
        );
      }),
      RUNS,
    );
  });

  it('behavior: hexToBytes / bytesToHex round-trip and agree with viem', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), fc.boolean(), (bytes, upper) => {
        const lower = toHex(bytes);
        expect(bytesToHex(bytes)).toBe(lower);
        const input = upper ? `0x${lower.slice(2).toUpperCase()}` : lower;
        expect(hexToBytes(input)).toEqual(viemHexToBytes(lower));
      }),
      RUNS,
    );
  });

  it('behavior: bytesToHex encodes only the view of a subarray', () => {
    const bytes = Uint8Array.from([1, 2, 3, 4, 5]);
    expect(bytesToHex(bytes.subarray(1, 3))).toBe('0x0203');
    expect(bytesToHex(new Uint8Array(0))).toBe('0x');
  });

  it('behavior: paddedLength rounds up to whole words', () => {
    expect([0, 1, 31, 32, 33, 65].map(paddedLength)).toEqual([0, 32, 32, 32, 64, 96]);
  });

  it('error: uint256 out of range or not a bigint', () => {
    const out = new Uint8Array(32);
    expect(() => writeUint256Word(out, 0, -1n)).toThrow('uint256: out of range');
    expect(() => writeUint256Word(out, 0, UINT256_MAX + 1n)).toThrow('uint256: out of range');
    expect(() => writeUint256Word(out, 0, 5 as unknown as bigint)).toThrow('uint256: expected a bigint');
  });

  it('error: malformed addresses are rejected without echoing them', () => {
    const out = new Uint8Array(32);
    const bad = [
      '',
      '0x',
      '0x' + '1'.repeat(39),
      '0x' + '1'.repeat(41),
      '1'.repeat(42),
      '0x' + '1'.repeat(39) + 'g',
      '0x' + 'z'.repeat(40),
      'Ox' + '1'.repeat(40),
      '0x' + '1'.repeat(38) + '\u0661\u0661', // Arabic-Indic digits are not hex
    ];
    for (const address of bad) {
      expect(() => writeAddressWord(out, 0, address)).toThrow(/^address: /);
      try {
        writeAddressWord(out, 0, address);
      } catch (err) {
        if (address.length > 4) expect((err as Error).message).not.toContain(address.slice(2));
      }
    }
  });

  it('error: hexToBytes rejects a missing prefix, odd length and non-hex digits', () => {
    expect(() => hexToBytes('abcd')).toThrow('hex: expected a 0x-prefixed string');
    expect(() => hexToBytes('0xabc')).toThrow('hex: odd number of digits');
    expect(() => hexToBytes('0xabcg')).toThrow('hex: invalid hex digit');
    expect(() => hexToBytes('0x 1')).toThrow('hex: invalid hex digit');
    expect(hexToBytes('0X0A')).toEqual(Uint8Array.from([10]));
  });

  it('error: a slot outside the buffer is rejected', () => {
    expect(() => writeUint256Word(new Uint8Array(40), 10, 1n)).toThrow('abi word: slot outside the buffer');
    expect(() => writeAddressWord(new Uint8Array(32), 1, `0x${'1'.repeat(40)}`)).toThrow(
      'abi word: slot outside the buffer',
    );
    expect(() => writeLengthWord(new Uint8Array(32), -1, 0)).toThrow('abi word: slot outside the buffer');
    expect(() => writeLengthWord(new Uint8Array(32), 0, -1)).toThrow('abi length');
  });
});

describe('hex-string words', () => {
  it('behavior: selectors and words agree with viem', () => {
    for (const sig of ['swap(address,uint256,address,uint256,uint256,bytes)', 'aggregate3((address,bool,bytes)[])'])
      expect(functionSelector(sig)).toBe(toFunctionSelector(`function ${sig}`));
    fc.assert(
      fc.property(uint256Arb, addressArb, (value, address) => {
        expect('0x' + uint256WordHex(value)).toBe(encodeAbiParameters([{ type: 'uint256' }], [value]));
        expect('0x' + addressWordHex(address)).toBe(
          encodeAbiParameters([{ type: 'address' }], [address.toLowerCase() as `0x${string}`]),
        );
      }),
      RUNS,
    );
  });

  it('bareHex takes a block call answer of several MiB (a regex group per byte overflowed the stack at 4 MiB)', () => {
    const answer = '0x' + 'ab'.repeat(4 * 1024 * 1024);
    expect(bareHex(answer)).toHaveLength(answer.length - 2);
  });

  it('error: out-of-range words and malformed hex throw', () => {
    expect(() => uint256WordHex(UINT256_MAX + 1n)).toThrow('uint256: out of range');
    expect(() => uint256WordHex(-1)).toThrow('uint256: out of range');
    expect(() => addressWordHex('0x1234')).toThrow('address');
    expect(() => bareHex('0xabc')).toThrow('hex');
    expect(() => bareHex('0xzz')).toThrow('hex');
    expect(() => bareHex('abcd')).toThrow('hex');
    expect(bareHex('0x')).toBe('');
    expect(bareHex('0xAbCd')).toBe('abcd');
    expect(padHexToWords('ab')).toBe('ab' + '0'.repeat(62));
    expect(padHexToWords('')).toBe('');
  });
});
