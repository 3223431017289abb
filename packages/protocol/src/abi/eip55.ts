/**
 * EIP-55 mixed-case checksum: the project's one implementation (request parsing, config
 * addresses and the signer's own address all go through it).
 */
import { keccak256 } from './keccak256';

const encoder = new TextEncoder();

/** The EIP-55 form (`0x` + 40 digits) of an address given as 40 lowercase hex digits, no prefix. */
export function toChecksumAddress(lowerHex: string): string {
  const hash = keccak256(encoder.encode(lowerHex));
  let out = '0x';
  for (let i = 0; i < 40; i++) {
    const c = lowerHex[i] as string;
    const nibble = ((hash[i >> 1] as number) >> (i % 2 === 0 ? 4 : 0)) & 0x0f;
    out += nibble >= 8 ? c.toUpperCase() : c;
  }
  return out;
}
