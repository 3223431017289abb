/**
 * ethers Interfaces for the cold path (registry reads, reserves): built once from the
 * compiled reference artifacts, which implement the documented interfaces. The per-block
 * `quote()` and `aggregate3` encodings are hand-written (call-codec.ts).
 */
import { Interface } from 'ethers';
import { PmmHelperArtifact } from '@pmm/contracts';

/** getListedTokens(), getQuoteToken(), getReserveBalances(address[]). */
export const helperInterface = new Interface(PmmHelperArtifact.abi);

/** The ERC-20 metadata the registry reads from every token. */
export const erc20Interface = new Interface([
  'function decimals() view returns (uint8)',
  'function symbol() view returns (string)',
]);

/** Some old tokens (MKR, SAI) return `symbol()` as bytes32. */
export const erc20Bytes32SymbolInterface = new Interface(['function symbol() view returns (bytes32)']);
